import { eq } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createCategory, publishService } from '../../../test/factories/services.ts'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { startReceiver, verifyWebhook, type Receiver } from '../../../test/setup/webhook-receiver.ts'
import { DAY, HOUR, MINUTE, SECOND } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import { catalogueEvents } from '../catalogue/catalogue.events.ts'
import { createDeliveriesRepository } from './deliveries.repository.ts'
import { systemResolver, type Resolver } from './destinations.ts'
import { STATIC_ENDPOINT_ID } from './event-log.service.ts'
import { createWebhookDispatcher, RETRY_DELAYS } from './webhook-dispatcher.ts'
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from './webhooks.table.ts'

/** The first attempt and its retries. */
const MAX_ATTEMPTS = RETRY_DELAYS.length + 1

interface Registered {
  id: string
  secret: string
}

describe('webhook delivery to real receivers', () => {
  let ctx: TestContext
  let admin: TestUser
  let staticReceiver: Receiver
  const receivers: Receiver[] = []

  beforeAll(async () => {
    // The configured endpoint receives every event of this file too (and always answers 200).
    staticReceiver = await startReceiver()
    ctx = await createTestApp({
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_URL: staticReceiver.url, WEBHOOK_SECRET: 'whsec_c3RhdGljLWVuZHBvaW50LXNlY3JldC0wMTIzNDU2Nzg5' },
    })
    admin = await createSuperuser(ctx)
  })

  afterEach(async () => {
    await ctx.database.db.delete(webhookEndpoints).where(eq(webhookEndpoints.source, 'api'))
    for (const receiver of receivers.splice(0)) await receiver.close()
  })

  afterAll(async () => {
    await ctx.close()
    await staticReceiver.close()
  })

  const dispatcher = () => ctx.app.container.webhooks.dispatcher
  // Tests move the clock by hours: a fresh session for each request.
  const adminToken = async () => (await ctx.app.container.auth.issueSession(admin.user)).accessToken

  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    const started = await startReceiver(...args)
    receivers.push(started)
    return started
  }

  async function register(url: string, body: Record<string, unknown> = {}): Promise<Registered> {
    const response = await request(ctx.app, { method: 'POST', url: '/admin/webhooks', token: await adminToken(), payload: { url, ...body } })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().data as Registered
  }

  /** Writes `service.approved` events as the catalogue would, and lets the worker record them. */
  async function emit(count = 1): Promise<string[]> {
    const ids = await ctx.database.db.transaction(async (tx) => {
      const written: string[] = []
      for (let n = 0; n < count; n++) written.push(await emitEvent(ctx.app.container.outbox, tx, catalogueEvents.serviceApproved, { serviceId: newId(), sellerId: newId() }, ctx.clock.now()))
      return written
    })
    await ctx.app.container.worker.drain()
    return ids
  }

  /** A dispatcher of its own whose resolver answers what the test says. */
  const dispatcherResolving = (allowPrivateNetworks: boolean, resolve: Resolver) =>
    createWebhookDispatcher({ db: ctx.database.db, clock: ctx.clock, outbox: ctx.app.container.outbox, logger: ctx.app.log, allowPrivateNetworks, resolve })
  const deliveriesOf = (endpointId: string) => ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId))
  const attemptsOf = (deliveryId: string) => ctx.database.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(webhookAttempts.attempt)
  const endpointRow = async (id: string) => (await ctx.database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)))[0]!

  it('delivers an approved service end to end: signed { event, timestamp, cursor, data }, the event id as webhook-id, the cursor of the event log', async () => {
    const hook = await receiver()
    const endpoint = await register(hook.url)
    const seller = await createUser(ctx)
    const serviceId = await publishService(ctx, seller.accessToken, await createCategory(ctx))
    const approved = await request(ctx.app, { method: 'POST', url: `/admin/services/${serviceId}/approve`, token: await adminToken() })
    expect(approved.statusCode).toBe(200)
    // Nothing leaves before the event's outbox job has created its deliveries.
    expect(await dispatcher().drain()).toBe(0)
    expect(await ctx.app.container.worker.drain()).toBeGreaterThanOrEqual(1)
    expect(await dispatcher().drain()).toBeGreaterThanOrEqual(1)

    expect(hook.received).toHaveLength(1)
    const [message] = hook.received
    expect(message!.headers['content-type']).toBe('application/json')
    const body = verifyWebhook(endpoint.secret, message!, ctx.clock.now())
    expect(body).toEqual({ event: 'service.approved', timestamp: expect.any(String), cursor: expect.stringMatching(/^[0-9]+$/), data: { serviceId, sellerId: seller.user.id } })
    expect(message!.headers['webhook-timestamp']).toBe(String(Math.floor(ctx.clock.now().getTime() / 1000)))

    const log = await request(ctx.app, { method: 'GET', url: '/admin/events?limit=100', token: await adminToken() })
    const entry = (log.json().data.items as { id: string; event: string; data: { serviceId: string } }[]).find((item) => item.data.serviceId === serviceId)
    expect(entry).toMatchObject({ event: 'service.approved', id: message!.headers['webhook-id'], cursor: (body as { cursor: string }).cursor })
    // The configured endpoint (WEBHOOK_URL) got it too, signed with WEBHOOK_SECRET.
    const configured = staticReceiver.received.find((candidate) => candidate.headers['webhook-id'] === entry!.id)
    expect(configured).toBeDefined()
    verifyWebhook('whsec_c3RhdGljLWVuZHBvaW50LXNlY3JldC0wMTIzNDU2Nzg5', configured!, ctx.clock.now())
    expect((await endpointRow(STATIC_ENDPOINT_ID)).source).toBe('config')
  })

  it('delivers every event to a receiver that was down for ten minutes, each signature valid, the same webhook-id on every attempt', async () => {
    const hook = await receiver({ status: 503, body: 'maintenance' })
    const endpoint = await register(hook.url)
    const start = ctx.clock.now().getTime()
    const eventIds = await emit(3)

    // Down: the first attempt, the retry about 5 s later and the one about 5 min later all fail.
    await dispatcher().drain()
    expect(hook.received).toHaveLength(3)
    ctx.clock.advance(6 * SECOND)
    await dispatcher().drain()
    expect(hook.received).toHaveLength(6)
    ctx.clock.advance(6 * MINUTE)
    await dispatcher().drain()
    expect(hook.received).toHaveLength(9)
    for (const delivery of await deliveriesOf(endpoint.id)) {
      expect(delivery).toMatchObject({ status: 'pending', attempts: 3, lastStatusCode: 503 })
      // The next retry is about 30 minutes after the third failure.
      expect(delivery.nextAttemptAt.getTime() - ctx.clock.now().getTime()).toBeGreaterThanOrEqual(RETRY_DELAYS[2])
    }
    expect((await endpointRow(endpoint.id)).failingSince?.getTime()).toBe(start)

    // Back after ten minutes; nothing is sent before the next retry is due.
    ctx.clock.set(new Date(start + 10 * MINUTE))
    hook.answer({ status: 204 })
    await dispatcher().drain()
    expect(hook.received).toHaveLength(9)
    ctx.clock.set(new Date(start + 40 * MINUTE))
    await dispatcher().drain()

    expect(hook.received).toHaveLength(12)
    const byEvent = new Map<string, string[]>()
    for (const message of hook.received) {
      const id = String(message.headers['webhook-id'])
      byEvent.set(id, [...(byEvent.get(id) ?? []), String(message.answer)])
      const at = new Date(Number(message.headers['webhook-timestamp']) * 1000)
      expect(verifyWebhook(endpoint.secret, message, at)).toMatchObject({ event: 'service.approved' })
    }
    expect([...byEvent.keys()].sort()).toEqual([...eventIds].sort())
    for (const answers of byEvent.values()) expect(answers).toEqual(['503', '503', '503', '204'])

    for (const delivery of await deliveriesOf(endpoint.id)) {
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 4, lastStatusCode: 204, lastError: null })
      const attempts = await attemptsOf(delivery.id)
      expect(attempts.map((attempt) => [attempt.attempt, attempt.statusCode, attempt.succeeded])).toEqual([
        [1, 503, false],
        [2, 503, false],
        [3, 503, false],
        [4, 204, true],
      ])
      expect(attempts[0]).toMatchObject({ error: 'answered 503', responseExcerpt: 'maintenance' })
    }
    expect((await endpointRow(endpoint.id)).failingSince).toBeNull()
  })

  it('loses nothing when a worker is killed mid-delivery: another sends the same webhook-id once the lease ends', async () => {
    const hook = await receiver('hang')
    const endpoint = await register(hook.url)
    const options = { db: ctx.database.db, clock: ctx.clock, outbox: ctx.app.container.outbox, logger: ctx.app.log, allowPrivateNetworks: true, resolve: systemResolver, leaseMs: MINUTE }
    const killed = createWebhookDispatcher({ ...options, timeoutMs: HOUR })
    const survivor = createWebhookDispatcher({ ...options, timeoutMs: 10 * SECOND })
    const [eventId] = await emit()

    const started = await killed.tick()
    expect(started.filter((task) => task.endpointId === endpoint.id)).toHaveLength(1)
    await hook.waitForRequests(1)
    // The worker dies here: its request is in flight and nothing is recorded.
    const [claimed] = await deliveriesOf(endpoint.id)
    expect(claimed).toMatchObject({ status: 'delivering', attempts: 1 })
    await survivor.drain()
    expect(hook.received).toHaveLength(1)

    ctx.clock.advance(MINUTE + 1)
    hook.answer({ status: 200 })
    await survivor.drain()
    expect(hook.received.map((message) => message.headers['webhook-id'])).toEqual([eventId, eventId])
    for (const message of hook.received) verifyWebhook(endpoint.secret, message, ctx.clock.now())
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2 })

    // The killed worker's request ends at last: its attempt is logged, the newer outcome stands.
    hook.release(500)
    await killed.settle()
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2, lastStatusCode: 200 })
    expect((await attemptsOf(claimed!.id)).map((attempt) => [attempt.attempt, attempt.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ])
  })

  it('keeps delivering to other endpoints while one receiver hangs', async () => {
    const slow = await receiver('hang')
    const fast = await receiver()
    const slowEndpoint = await register(slow.url)
    const fastEndpoint = await register(fast.url)
    await emit()

    const first = await dispatcher().tick()
    const slowTask = first.find((task) => task.endpointId === slowEndpoint.id)!
    let slowDone = false
    void slowTask.done.then(() => (slowDone = true))
    await first.find((task) => task.endpointId === fastEndpoint.id)!.done
    await slow.waitForRequests(1)
    expect(slowDone).toBe(false)
    expect((await deliveriesOf(fastEndpoint.id))[0]).toMatchObject({ status: 'succeeded' })
    expect((await deliveriesOf(slowEndpoint.id))[0]).toMatchObject({ status: 'delivering' })

    // More events while it still hangs: the fast receiver gets them at once; the hanging endpoint
    // is not claimed again by this worker until its delivery ends.
    await emit(2)
    const second = await dispatcher().tick()
    expect(second.some((task) => task.endpointId === slowEndpoint.id)).toBe(false)
    await Promise.all(second.filter((task) => task.endpointId === fastEndpoint.id).map((task) => task.done))
    expect(fast.received).toHaveLength(3)
    expect(slow.received).toHaveLength(1)
    expect(slowDone).toBe(false)

    slow.answer({ status: 200 })
    slow.release(200)
    await dispatcher().drain()
    expect(slowDone).toBe(true)
    expect((await deliveriesOf(slowEndpoint.id)).map((delivery) => delivery.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
  })

  it('gives up on an attempt that gets no answer within the timeout and retries it', async () => {
    const hook = await receiver('hang')
    const endpoint = await register(hook.url)
    const short = createWebhookDispatcher({ db: ctx.database.db, clock: ctx.clock, outbox: ctx.app.container.outbox, logger: ctx.app.log, allowPrivateNetworks: true, resolve: systemResolver, timeoutMs: 50 })
    await emit()
    const tasks = await short.tick()
    await Promise.all(tasks.map((task) => task.done))
    const [delivery] = await deliveriesOf(endpoint.id)
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null, lastError: 'no answer within 50 ms' })
    expect(delivery!.nextAttemptAt.getTime() - ctx.clock.now().getTime()).toBeGreaterThanOrEqual(5 * SECOND)
    expect(delivery!.nextAttemptAt.getTime() - ctx.clock.now().getTime()).toBeLessThanOrEqual(5.5 * SECOND)
  })

  it('counts only 2xx as success and follows no redirect', async () => {
    const target = await receiver()
    const redirecting = await receiver({ status: 302, headers: { location: target.url } })
    const endpoint = await register(redirecting.url)
    await emit()
    await dispatcher().drain()
    expect(redirecting.received).toHaveLength(1)
    expect(target.received).toHaveLength(0)
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: 'pending', lastStatusCode: 302, lastError: 'answered 302' })
  })

  it('keeps at most 1 KB of an answer in the delivery log', async () => {
    const hook = await receiver({ status: 500, body: 'x'.repeat(5000) })
    const endpoint = await register(hook.url)
    await emit()
    await dispatcher().drain()
    const [delivery] = await deliveriesOf(endpoint.id)
    expect((await attemptsOf(delivery!.id))[0]!.responseExcerpt).toBe('x'.repeat(1024))
  })

  it('records an answer holding NUL bytes, and nothing for a delivery whose endpoint was deleted mid-attempt', async () => {
    const binary = await receiver({ status: 500, body: 'a\u0000b' })
    const hanging = await receiver('hang')
    const kept = await register(binary.url)
    const deleted = await register(hanging.url)
    const logger = { error: vi.fn(), warn: vi.fn() } as unknown as FastifyBaseLogger
    const own = createWebhookDispatcher({ db: ctx.database.db, clock: ctx.clock, outbox: ctx.app.container.outbox, logger, allowPrivateNetworks: true, resolve: systemResolver })
    await emit()
    const tasks = await own.tick()
    await hanging.waitForRequests(1)
    const removed = await request(ctx.app, { method: 'DELETE', url: `/admin/webhooks/${deleted.id}`, token: await adminToken() })
    expect(removed.statusCode).toBe(200)
    hanging.release(200)
    await Promise.all(tasks.map((task) => task.done))
    expect(logger.error).not.toHaveBeenCalled()
    expect(await deliveriesOf(deleted.id)).toEqual([])
    const [delivery] = await deliveriesOf(kept.id)
    expect((await attemptsOf(delivery!.id))[0]).toMatchObject({ statusCode: 500, responseExcerpt: 'ab' })
  })

  it('disables an endpoint that answers 410 Gone and e-mails the superusers', async () => {
    const hook = await receiver({ status: 410 })
    const endpoint = await register(hook.url)
    await emit(2)
    await dispatcher().drain()
    const row = await endpointRow(endpoint.id)
    expect(row).toMatchObject({ enabled: false, disabledReason: 'The receiver answered 410 Gone' })
    // Both were in flight side by side: each failed for good, not to be retried.
    const deliveries = await deliveriesOf(endpoint.id)
    expect(deliveries.map((delivery) => [delivery.status, delivery.lastStatusCode])).toEqual([
      ['failed', 410],
      ['failed', 410],
    ])
    // Disabled: new events do not go to it.
    ctx.clock.advance(HOUR)
    await emit()
    await dispatcher().drain()
    expect(hook.received).toHaveLength(2)
    expect(await deliveriesOf(endpoint.id)).toHaveLength(2)

    await ctx.app.container.worker.drain()
    const notices = ctx.mailer.sent.filter((message) => message.to === admin.user.email && message.text.includes(endpoint.id))
    expect(notices).toHaveLength(1)
    expect(notices[0]!.subject).toBe('A webhook endpoint was disabled')
    expect(notices[0]!.text).toContain('410 Gone')
  })

  it('disables an endpoint after a day of failures, e-mails the superusers, and fails the delivery after its last retry', async () => {
    const hook = await receiver({ status: 500 })
    const endpoint = await register(hook.url)
    await emit()
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await dispatcher().drain()
      expect(hook.received, `attempt ${attempt}`).toHaveLength(attempt)
      const [delivery] = await deliveriesOf(endpoint.id)
      if (attempt < MAX_ATTEMPTS) {
        expect(delivery).toMatchObject({ status: 'pending', attempts: attempt })
        expect((await endpointRow(endpoint.id)).enabled).toBe(true)
        ctx.clock.set(delivery!.nextAttemptAt)
      } else {
        expect(delivery).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS })
      }
    }
    expect(hook.received).toHaveLength(MAX_ATTEMPTS)
    const row = await endpointRow(endpoint.id)
    expect(row).toMatchObject({ enabled: false, disabledReason: 'Every delivery attempt failed for 24 hours' })
    expect(row.disabledAt!.getTime() - row.failingSince!.getTime()).toBeGreaterThanOrEqual(DAY)
    await ctx.app.container.worker.drain()
    expect(ctx.mailer.sent.filter((message) => message.to === admin.user.email && message.text.includes(endpoint.id))).toHaveLength(1)

    // Enabled again by a superuser: the failure run starts over, and the delivery can be retried.
    const enabled = await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, token: await adminToken(), payload: { enabled: true } })
    expect(enabled.json().data).toMatchObject({ enabled: true, disabledReason: null, failingSince: null })
    hook.answer({ status: 200 })
    const [delivery] = await deliveriesOf(endpoint.id)
    const retried = await request(ctx.app, { method: 'POST', url: `/admin/webhook-deliveries/${delivery!.id}/retry`, token: await adminToken() })
    expect(retried.statusCode).toBe(202)
    await dispatcher().drain()
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: 'succeeded', attempts: MAX_ATTEMPTS + 1 })
    expect(new Set(hook.received.map((message) => message.headers['webhook-id'])).size).toBe(1)
  })

  it('signs with both secrets during a rotation, and with the new one alone after the overlap', async () => {
    const hook = await receiver()
    const endpoint = await register(hook.url)
    const rotated = await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/rotate-secret`, token: await adminToken() })
    expect(rotated.statusCode).toBe(200)
    const { secret } = rotated.json().data as { secret: string }
    expect(secret).not.toBe(endpoint.secret)
    await emit()
    await dispatcher().drain()
    const [during] = hook.received
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2)
    verifyWebhook(secret, during!, ctx.clock.now())
    verifyWebhook(endpoint.secret, during!, ctx.clock.now())

    ctx.clock.advance(DAY + SECOND)
    await emit()
    await dispatcher().drain()
    const after = hook.received[1]!
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1)
    verifyWebhook(secret, after, ctx.clock.now())
    expect(() => verifyWebhook(endpoint.secret, after, ctx.clock.now())).toThrow('No matching signature')
  })

  it('connects to the address it resolved once, keeping the URL host in the Host header', async () => {
    const hook = await receiver()
    const endpoint = await register(`http://hooks.example.invalid:${hook.port}/in`)
    const lookups: string[] = []
    const pinned = dispatcherResolving(true, async (hostname) => {
      lookups.push(hostname)
      return [{ address: '127.0.0.1', family: 4 }]
    })
    await emit()
    const tasks = await pinned.tick()
    await Promise.all(tasks.map((task) => task.done))
    expect(lookups).toEqual(['hooks.example.invalid'])
    expect(hook.received).toHaveLength(1)
    expect(hook.received[0]!.headers.host).toBe(`hooks.example.invalid:${hook.port}`)
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: 'succeeded' })
  })

  it('refuses at delivery a destination that now resolves into a private network, and sends nothing', async () => {
    const hook = await receiver()
    const endpoint = await register(`http://rebind.example.invalid:${hook.port}/in`)
    const guarded = dispatcherResolving(false, async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '::ffff:127.0.0.1', family: 6 },
    ])
    await emit()
    const tasks = await guarded.tick()
    await Promise.all(tasks.map((task) => task.done))
    expect(hook.received).toHaveLength(0)
    const [delivery] = await deliveriesOf(endpoint.id)
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null })
    expect(delivery!.lastError).toBe('rebind.example.invalid resolves to a private or reserved address (::ffff:127.0.0.1)')
  })

  it('refuses cloud metadata and platform destinations where private networks are allowed: at registration, and at delivery after resolving', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://2852039166/', 'http://[::ffff:a9fe:a9fe]/', 'http://168.63.129.16/machine', 'http://[fd00:ec2::254]/']) {
      const refused = await request(ctx.app, { method: 'POST', url: '/admin/webhooks', token: await adminToken(), payload: { url } })
      expectError(refused, 400, 'VALIDATION_ERROR', ['url'])
      expect(refused.json().error.details[0].message).toContain('is a cloud metadata or platform address')
    }
    const hook = await receiver()
    const endpoint = await register(`http://metadata.example.invalid:${hook.port}/in`)
    const guarded = dispatcherResolving(true, async () => [{ address: '169.254.169.254', family: 4 }])
    await emit()
    await Promise.all((await guarded.tick()).map((task) => task.done))
    expect(hook.received).toHaveLength(0)
    const [delivery] = await deliveriesOf(endpoint.id)
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastError: 'metadata.example.invalid resolves to a cloud metadata or platform address (169.254.169.254)' })
  })

  // The harness provides a template database only when the suite runs on PostgreSQL (TEST_DATABASE_URL).
  it.runIf(inject('pgTemplate') !== '')('lets two workers deliver side by side on PostgreSQL, each message once', async () => {
    const hooks = [await receiver(), await receiver()]
    const endpoints = [await register(hooks[0]!.url), await register(hooks[1]!.url)]
    const options = { db: ctx.database.db, clock: ctx.clock, outbox: ctx.app.container.outbox, logger: ctx.app.log, allowPrivateNetworks: true, resolve: systemResolver }
    const first = createWebhookDispatcher(options)
    const second = createWebhookDispatcher(options)
    const eventIds = await emit(12)
    await Promise.all([first.drain(), second.drain()])
    for (const [index, hook] of hooks.entries()) {
      expect(hook.received.map((message) => message.headers['webhook-id']).sort()).toEqual([...eventIds].sort())
      for (const message of hook.received) verifyWebhook(endpoints[index]!.secret, message, ctx.clock.now())
    }
    for (const endpoint of endpoints) expect((await deliveriesOf(endpoint.id)).every((delivery) => delivery.status === 'succeeded' && delivery.attempts === 1)).toBe(true)
  })

  // Many small claims racing over one queue: a claimer that locks a row another has just claimed
  // and committed must see it is no longer due, whatever its snapshot said.
  it.runIf(inject('pgTemplate') !== '')('never hands one delivery to two claimers racing on PostgreSQL', async () => {
    const endpoint = await register('http://127.0.0.1:9/in')
    const now = ctx.clock.now()
    const ids = Array.from({ length: 300 }, () => newId())
    await ctx.database.db.insert(webhookDeliveries).values(
      ids.map((id) => ({ id, endpointId: endpoint.id, messageId: newId(), event: 'service.published', body: '{}', status: 'pending' as const, nextAttemptAt: now, createdAt: now })),
    )
    const deliveries = createDeliveriesRepository(ctx.database.db)
    const claimed: string[] = []
    const claimer = async () => {
      for (;;) {
        const rows = await deliveries.claimDue({ now, leaseUntil: new Date(now.getTime() + MINUTE), limit: 3, perEndpoint: 1000, busy: [] })
        if (rows.length === 0) return
        claimed.push(...rows.map((row) => row.id))
      }
    }
    await Promise.all(Array.from({ length: 8 }, claimer))
    expect(claimed).toHaveLength(ids.length)
    expect(new Set(claimed).size).toBe(ids.length)
  })

  it('sends a test message to one endpoint alone, and replays a delivered message with the same webhook-id', async () => {
    const hook = await receiver()
    const other = await receiver()
    const endpoint = await register(hook.url)
    await register(other.url)
    const test = await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/test`, token: await adminToken() })
    expect(test.statusCode).toBe(202)
    expect(test.json().data).toMatchObject({ endpointId: endpoint.id, event: 'webhook.test', status: 'pending', attempts: [] })
    await dispatcher().drain()
    expect(other.received).toHaveLength(0)
    expect(verifyWebhook(endpoint.secret, hook.received[0]!, ctx.clock.now())).toEqual({ event: 'webhook.test', timestamp: expect.any(String), data: { endpointId: endpoint.id } })

    const replay = await request(ctx.app, { method: 'POST', url: `/admin/webhook-deliveries/${test.json().data.id}/retry`, token: await adminToken() })
    expect(replay.statusCode).toBe(202)
    expect(replay.json().data).toMatchObject({ status: 'pending', attemptCount: 1, attempts: [{ attempt: 1, statusCode: 200, succeeded: true }] })
    await dispatcher().drain()
    expect(hook.received.map((message) => message.headers['webhook-id'])).toEqual([test.json().data.webhookId, test.json().data.webhookId])

    const log = await request(ctx.app, { method: 'GET', url: `/admin/webhooks/${endpoint.id}/deliveries`, token: await adminToken() })
    expect(log.json().data.items[0]).toMatchObject({ status: 'succeeded', attemptCount: 2, attempts: [{ attempt: 1 }, { attempt: 2, statusCode: 200, responseExcerpt: 'ok' }] })
    expect(log.json().data.items[0].attempts[1].latencyMs).toEqual(expect.any(Number))
  })
})
