import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { API, createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { newId } from '../../lib/ids.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import { auditLog } from '../audit/audit.table.ts'
import { catalogueEvents } from '../catalogue/catalogue.events.ts'
import { walletEvents } from '../wallet/wallet.events.ts'
import { STATIC_ENDPOINT_ID } from './event-log.service.ts'
import { webhookDeliveries, webhookEndpoints } from './webhooks.table.ts'

const UNKNOWN_ID = '01890000-0000-7000-8000-000000000000'
/** Public addresses written as IP literals: nothing to resolve, so the tests need no DNS. */
const PUBLIC_URL = 'https://93.184.215.14/hooks'
const STATIC_URL = 'https://93.184.215.15/configured'

const ENDPOINT_FIELDS = ['createdAt', 'description', 'disabledAt', 'disabledReason', 'enabled', 'events', 'failingSince', 'id', 'previousSecretExpiresAt', 'source', 'updatedAt', 'url']

describe('webhook administration', () => {
  let ctx: TestContext
  let admin: TestUser
  let staff: TestUser
  let client: TestUser

  beforeAll(async () => {
    // Private networks refused, as in production; a configured endpoint besides the registered ones.
    ctx = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_URL: STATIC_URL, WEBHOOK_SECRET: 'whsec_c3RhdGljLWVuZHBvaW50LXNlY3JldC0wMTIzNDU2Nzg5' } })
    admin = await createSuperuser(ctx)
    staff = await createUser(ctx, { permissions: ['view_users', 'manage_users', 'view_services', 'approve_services', 'view_accounts'] })
    client = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  const create = (payload: Record<string, unknown>, token = admin.accessToken) => request(ctx.app, { method: 'POST', url: '/admin/webhooks', token, payload })

  async function createEndpoint(payload: Record<string, unknown> = {}) {
    const response = await create({ url: PUBLIC_URL, ...payload })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().data as { id: string; secret: string; url: string }
  }

  async function emit(event: 'approved' | 'payout') {
    await ctx.database.db.transaction((tx) =>
      event === 'approved'
        ? emitEvent(ctx.app.container.outbox, tx, catalogueEvents.serviceApproved, { serviceId: newId(), sellerId: newId() }, ctx.clock.now())
        : emitEvent(ctx.app.container.outbox, tx, walletEvents.payoutProcessed, { payoutId: newId(), userId: newId(), amount: 12.5 }, ctx.clock.now()),
    )
    await ctx.app.container.worker.drain()
  }

  /** The cursor after every event logged so far. */
  async function lastCursor(): Promise<string> {
    let cursor = '0'
    for (;;) {
      const page = (await request(ctx.app, { method: 'GET', url: `/admin/events?after=${cursor}&limit=100`, token: admin.accessToken })).json().data
      cursor = page.nextCursor
      if (!page.hasMore) return cursor
    }
  }

  describe('POST /admin/webhooks', () => {
    it('registers an endpoint and shows its whsec_ secret once', async () => {
      const response = await create({ url: PUBLIC_URL, description: 'Accounting', events: ['service.approved', 'payout.processed'] })
      expect(response.statusCode).toBe(201)
      const data = response.json().data
      expect(Object.keys(data).sort()).toEqual([...ENDPOINT_FIELDS, 'secret'].sort())
      expect(data).toMatchObject({ url: PUBLIC_URL, description: 'Accounting', events: ['service.approved', 'payout.processed'], enabled: true, source: 'api', disabledReason: null })
      expect(data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const shown = await request(ctx.app, { method: 'GET', url: `/admin/webhooks/${data.id}`, token: admin.accessToken })
      expect(shown.statusCode).toBe(200)
      expect(shown.json().data).not.toHaveProperty('secret')
      const listed = await request(ctx.app, { method: 'GET', url: '/admin/webhooks?limit=100', token: admin.accessToken })
      expect(listed.body).not.toContain(data.secret)
      const [row] = await ctx.database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, data.id))
      expect(row).toMatchObject({ secret: data.secret, events: ['service.approved', 'payout.processed'] })
    })

    it('takes every event when events is omitted or null', async () => {
      expect((await createEndpoint()).url).toBe(PUBLIC_URL)
      const nullEvents = await create({ url: PUBLIC_URL, events: null })
      expect(nullEvents.json().data.events).toBeNull()
    })

    it.each(['ftp://files.example.com/hook', 'javascript:alert(1)', 'file:///etc/passwd', 'https://user:secret@93.184.215.14/hook', 'https://:secret@93.184.215.14/hook', 'not a url', 'http://'])(
      'refuses %s (400 on url, by the rule the document states)',
      async (url) => {
        const response = await create({ url })
        expectError(response, 400, 'VALIDATION_ERROR', ['url'])
        expect(response.json().error.details).toEqual([{ field: 'url', message: 'must be an http or https URL without credentials, at most 2048 characters' }])
      },
    )

    it('refuses a missing or empty url (400 on url)', async () => {
      expectError(await create({}), 400, 'VALIDATION_ERROR', ['url'])
      expectError(await create({ url: '' }), 400, 'VALIDATION_ERROR', ['url'])
      expectError(await create({ url: 42 }), 400, 'VALIDATION_ERROR', ['url'])
    })

    it.each([
      ['http://127.0.0.1/hook', '127.0.0.1 is a private or reserved address'],
      ['http://[::1]/hook', '::1 is a private or reserved address'],
      ['http://169.254.169.254/latest/meta-data', '169.254.169.254 is a cloud metadata or platform address'],
      ['http://168.63.129.16/machine', '168.63.129.16 is a cloud metadata or platform address'],
      ['http://10.0.0.1/hook', '10.0.0.1 is a private or reserved address'],
      ['http://100.64.0.1/hook', '100.64.0.1 is a private or reserved address'],
      ['http://192.168.1.10:8080/hook', '192.168.1.10 is a private or reserved address'],
      ['http://[fd00:ec2::254]/hook', 'fd00:ec2::254 is a cloud metadata or platform address'],
      ['http://[fd00:ec2::253]/hook', 'fd00:ec2::253 is a private or reserved address'],
      ['http://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1 is a private or reserved address'],
      ['http://0x7f000001/hook', '127.0.0.1 is a private or reserved address'],
      ['http://localhost:8000/hook', 'localhost resolves to a private or reserved address'],
    ])('refuses %s when private networks are refused (400 on url)', async (url, message) => {
      const response = await create({ url })
      expectError(response, 400, 'VALIDATION_ERROR', ['url'])
      expect(response.json().error.details[0].message).toContain(message)
    })

    it('refuses an unknown event name (400 on events), and an empty list', async () => {
      const unknown = await create({ url: PUBLIC_URL, events: ['service.approved', 'order.exploded'] })
      expectError(unknown, 400, 'VALIDATION_ERROR', ['events.1'])
      expect(unknown.json().error.details[0].message).toContain('must be one of the events: ')
      expect(unknown.json().error.details[0].message).toContain('service.approved')
      expectError(await create({ url: PUBLIC_URL, events: [] }), 400, 'VALIDATION_ERROR', ['events'])
      expectError(await create({ url: PUBLIC_URL, events: 'service.approved' }), 400, 'VALIDATION_ERROR', ['events'])
    })

    it('refuses a subscription to the test message (400 on events), which every endpoint gets when tested', async () => {
      const refused = await create({ url: PUBLIC_URL, events: ['service.approved', 'webhook.test'] })
      expectError(refused, 400, 'VALIDATION_ERROR', ['events.1'])
      expect(refused.json().error.details[0].message).toContain('webhook.test is not one: every endpoint receives it when it is tested')
      const endpoint = await createEndpoint({ events: ['payout.processed'] })
      expectError(await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken, payload: { events: ['webhook.test'] } }), 400, 'VALIDATION_ERROR', ['events.0'])
      const test = await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/test`, token: admin.accessToken })
      expect(test.json().data).toMatchObject({ event: 'webhook.test', status: 'pending', endpointId: endpoint.id })
    })

    it('refuses unknown fields (400)', async () => {
      expectError(await create({ url: PUBLIC_URL, secret: 'whsec_mine' }), 400, 'VALIDATION_ERROR', ['secret'])
    })

    it('answers 401 without a token and 403 to staff and clients', async () => {
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/webhooks', payload: { url: PUBLIC_URL } }), 401, 'UNAUTHENTICATED')
      expectError(await create({ url: PUBLIC_URL }, staff.accessToken), 403, 'FORBIDDEN')
      expectError(await create({ url: PUBLIC_URL }, client.accessToken), 403, 'FORBIDDEN')
    })
  })

  describe('reading, changing and deleting endpoints', () => {
    it('lists endpoints with pagination, and answers 404 for an unknown or malformed id', async () => {
      await createEndpoint()
      const listed = await request(ctx.app, { method: 'GET', url: '/admin/webhooks?limit=2', token: admin.accessToken })
      expect(listed.statusCode).toBe(200)
      expect(listed.json().data.items).toHaveLength(2)
      expect(listed.json().data.pagination).toMatchObject({ page: 1, limit: 2, hasPrev: false })
      for (const url of [`/admin/webhooks/${UNKNOWN_ID}`, '/admin/webhooks/not-an-id', `/admin/webhooks/${UNKNOWN_ID}/deliveries`]) {
        expectError(await request(ctx.app, { method: 'GET', url, token: admin.accessToken }), 404, 'NOT_FOUND')
      }
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/webhooks?limit=500', token: admin.accessToken }), 400, 'VALIDATION_ERROR', ['limit'])
    })

    it('updates url, description, events and enabled, with the same rules as registration', async () => {
      const endpoint = await createEndpoint()
      const patch = (payload: Record<string, unknown>) => request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken, payload })
      const updated = await patch({ url: 'https://93.184.215.16/v2', description: null, events: ['payout.processed'], enabled: false })
      expect(updated.statusCode).toBe(200)
      expect(updated.json().data).toMatchObject({ url: 'https://93.184.215.16/v2', description: null, events: ['payout.processed'], enabled: false, disabledReason: 'Disabled by a superuser' })
      expect(updated.json().data.disabledAt).toEqual(expect.any(String))
      const enabled = await patch({ enabled: true })
      expect(enabled.json().data).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null })
      expectError(await patch({ url: 'http://10.1.2.3/' }), 400, 'VALIDATION_ERROR', ['url'])
      expectError(await patch({ events: ['no.such_event'] }), 400, 'VALIDATION_ERROR', ['events.0'])
      expectError(await patch({}), 400, 'VALIDATION_ERROR')
      expectError(await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${UNKNOWN_ID}`, token: admin.accessToken, payload: { enabled: true } }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, token: staff.accessToken, payload: { enabled: true } }), 403, 'FORBIDDEN')
      expectError(await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, payload: { enabled: true } }), 401, 'UNAUTHENTICATED')
    })

    it('deletes an endpoint with its deliveries', async () => {
      const endpoint = await createEndpoint()
      await emit('approved')
      expect(await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id))).toHaveLength(1)
      expectError(await request(ctx.app, { method: 'DELETE', url: `/admin/webhooks/${endpoint.id}`, token: staff.accessToken }), 403, 'FORBIDDEN')
      const deleted = await request(ctx.app, { method: 'DELETE', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken })
      expect(deleted.statusCode).toBe(200)
      expect(deleted.json().data).toEqual({ message: 'Webhook endpoint deleted' })
      expect(await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id))).toHaveLength(0)
      expectError(await request(ctx.app, { method: 'DELETE', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken }), 404, 'NOT_FOUND')
    })

    it('rotates the secret: a new one shown once, the previous one signing for a day', async () => {
      const endpoint = await createEndpoint()
      const rotated = await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/rotate-secret`, token: admin.accessToken })
      expect(rotated.statusCode).toBe(200)
      const data = rotated.json().data
      expect(data.secret).toMatch(/^whsec_/)
      expect(data.secret).not.toBe(endpoint.secret)
      expect(new Date(data.previousSecretExpiresAt).getTime() - ctx.clock.now().getTime()).toBe(24 * 3600 * 1000)
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${UNKNOWN_ID}/rotate-secret`, token: admin.accessToken }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/rotate-secret`, token: client.accessToken }), 403, 'FORBIDDEN')
    })

    it('puts every change on record with what changed, never a secret, and nothing for a refused change', async () => {
      const endpoint = await createEndpoint({ events: ['service.approved'] })
      const patched = await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken, payload: { events: ['payout.processed'], enabled: false } })
      const rotated = await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/rotate-secret`, token: admin.accessToken })
      expectError(await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken, payload: { url: 'http://10.0.0.1/' } }), 400, 'VALIDATION_ERROR', ['url'])
      const deleted = await request(ctx.app, { method: 'DELETE', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken })
      const rows = await ctx.database.db.select().from(auditLog).where(eq(auditLog.targetId, endpoint.id)).orderBy(auditLog.createdAt, auditLog.id)
      const state = { url: PUBLIC_URL, description: null, enabled: true }
      expect(rows.map(({ action, actorId, targetType, before, after }) => ({ action, actorId, targetType, before, after }))).toEqual(
        expect.arrayContaining([
          { action: 'webhook.create', actorId: admin.user.id, targetType: 'webhook_endpoint', before: null, after: { ...state, events: ['service.approved'] } },
          { action: 'webhook.update', actorId: admin.user.id, targetType: 'webhook_endpoint', before: { ...state, events: ['service.approved'] }, after: { ...state, events: ['payout.processed'], enabled: false } },
          { action: 'webhook.rotate_secret', actorId: admin.user.id, targetType: 'webhook_endpoint', before: null, after: { previousSecretExpiresAt: expect.any(String) } },
          { action: 'webhook.delete', actorId: admin.user.id, targetType: 'webhook_endpoint', before: { ...state, events: ['payout.processed'], enabled: false }, after: null },
        ]),
      )
      expect(rows).toHaveLength(4)
      expect(rows.map((row) => row.requestId)).toEqual(expect.arrayContaining([patched.headers['x-request-id'], rotated.headers['x-request-id'], deleted.headers['x-request-id']]))
      expect(JSON.stringify(rows)).not.toMatch(/whsec_/)
    })
  })

  describe('the configured endpoint (WEBHOOK_URL)', () => {
    it('appears once an event was recorded, with source config; only enabled can change', async () => {
      await emit('approved')
      const listed = await request(ctx.app, { method: 'GET', url: '/admin/webhooks?limit=100', token: admin.accessToken })
      const configured = (listed.json().data.items as { id: string; source: string; url: string }[]).find((item) => item.source === 'config')
      expect(configured).toMatchObject({ id: STATIC_ENDPOINT_ID, url: STATIC_URL })
      const url = `/admin/webhooks/${STATIC_ENDPOINT_ID}`
      expectError(await request(ctx.app, { method: 'PATCH', url, token: admin.accessToken, payload: { url: PUBLIC_URL } }), 422, 'STATIC_ENDPOINT')
      expectError(await request(ctx.app, { method: 'DELETE', url, token: admin.accessToken }), 422, 'STATIC_ENDPOINT')
      expectError(await request(ctx.app, { method: 'POST', url: `${url}/rotate-secret`, token: admin.accessToken }), 422, 'STATIC_ENDPOINT')
      const disabled = await request(ctx.app, { method: 'PATCH', url, token: admin.accessToken, payload: { enabled: false } })
      expect(disabled.json().data).toMatchObject({ enabled: false, source: 'config' })
      // A later event keeps it as its owner left it.
      await emit('approved')
      expect((await request(ctx.app, { method: 'GET', url, token: admin.accessToken })).json().data.enabled).toBe(false)
      expect((await request(ctx.app, { method: 'PATCH', url, token: admin.accessToken, payload: { enabled: true } })).json().data.enabled).toBe(true)
    })
  })

  describe('deliveries, test sends and retries', () => {
    it('counts endpoints and waiting deliveries in the admin statistics, and the metrics show the same figures', async () => {
      const stats = async () => (await request(ctx.app, { method: 'GET', url: '/admin/stats', token: admin.accessToken })).json().data.webhooks
      const waitingRows = async () => (await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.status, 'pending'))).length
      const before = await stats()
      const rowsBefore = await waitingRows()
      await createEndpoint()
      await emit('approved')
      const after = await stats()
      expect(after.endpoints).toEqual({ enabled: before.endpoints.enabled + 1, disabled: before.endpoints.disabled })
      expect(after.deliveries.waiting - before.deliveries.waiting).toBe((await waitingRows()) - rowsBefore)
      expect(after.deliveries.waiting).toBeGreaterThan(before.deliveries.waiting)
      const metrics = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body
      expect(metrics).toContain(`marketplace_statistic{section="webhooks",figure="endpoints.enabled"} ${after.endpoints.enabled}`)
      expect(metrics).toContain(`marketplace_statistic{section="webhooks",figure="deliveries.waiting"} ${after.deliveries.waiting}`)
    })

    it('creates deliveries only for endpoints subscribed to the event', async () => {
      const payouts = await createEndpoint({ events: ['payout.processed'] })
      const everything = await createEndpoint()
      await emit('approved')
      await emit('payout')
      const events = async (id: string) => (await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, id))).map((row) => row.event).sort()
      expect(await events(payouts.id)).toEqual(['payout.processed'])
      expect(await events(everything.id)).toEqual(['payout.processed', 'service.approved'])
    })

    it('lists an endpoint’s deliveries newest first, filtered by status', async () => {
      const endpoint = await createEndpoint()
      await emit('approved')
      await emit('payout')
      const all = await request(ctx.app, { method: 'GET', url: `/admin/webhooks/${endpoint.id}/deliveries`, token: admin.accessToken })
      expect(all.statusCode).toBe(200)
      const items = all.json().data.items as { event: string; status: string; webhookId: string; attempts: unknown[] }[]
      expect(items.map((item) => item.event)).toEqual(['payout.processed', 'service.approved'])
      expect(items[0]).toMatchObject({ status: 'pending', attempts: [], attemptCount: 0, endpointId: endpoint.id })
      const succeeded = await request(ctx.app, { method: 'GET', url: `/admin/webhooks/${endpoint.id}/deliveries?status=succeeded`, token: admin.accessToken })
      expect(succeeded.json().data.items).toEqual([])
      expectError(await request(ctx.app, { method: 'GET', url: `/admin/webhooks/${endpoint.id}/deliveries?status=lost`, token: admin.accessToken }), 400, 'VALIDATION_ERROR', ['status'])
      expectError(await request(ctx.app, { method: 'GET', url: `/admin/webhooks/${endpoint.id}/deliveries`, token: staff.accessToken }), 403, 'FORBIDDEN')
      expectError(await request(ctx.app, { method: 'GET', url: `/admin/webhooks/${endpoint.id}/deliveries` }), 401, 'UNAUTHENTICATED')
    })

    it('queues a test message (202), refused for a disabled endpoint (422) and an unknown one (404)', async () => {
      const endpoint = await createEndpoint()
      const test = await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/test`, token: admin.accessToken })
      expect(test.statusCode).toBe(202)
      expect(test.json().data).toMatchObject({ event: 'webhook.test', status: 'pending', endpointId: endpoint.id })
      await request(ctx.app, { method: 'PATCH', url: `/admin/webhooks/${endpoint.id}`, token: admin.accessToken, payload: { enabled: false } })
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/test`, token: admin.accessToken }), 422, 'ENDPOINT_DISABLED')
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${UNKNOWN_ID}/test`, token: admin.accessToken }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhooks/${endpoint.id}/test`, token: staff.accessToken }), 403, 'FORBIDDEN')
      // The test message is not an event: the log does not show it.
      const log = await request(ctx.app, { method: 'GET', url: '/admin/events?limit=100', token: admin.accessToken })
      expect(log.body).not.toContain('webhook.test')
    })

    it('retries a delivery (202), 404 for an unknown one, 403 for staff', async () => {
      const endpoint = await createEndpoint()
      await emit('approved')
      const [delivery] = await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id))
      const retried = await request(ctx.app, { method: 'POST', url: `/admin/webhook-deliveries/${delivery!.id}/retry`, token: admin.accessToken })
      expect(retried.statusCode).toBe(202)
      expect(retried.json().data).toMatchObject({ id: delivery!.id, status: 'pending', nextAttemptAt: ctx.clock.now().toISOString() })
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhook-deliveries/${UNKNOWN_ID}/retry`, token: admin.accessToken }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/webhook-deliveries/nope/retry', token: admin.accessToken }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhook-deliveries/${delivery!.id}/retry`, token: staff.accessToken }), 403, 'FORBIDDEN')
      await ctx.database.db.update(webhookDeliveries).set({ status: 'delivering', lockedUntil: new Date(ctx.clock.now().getTime() + 60_000) }).where(eq(webhookDeliveries.id, delivery!.id))
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/webhook-deliveries/${delivery!.id}/retry`, token: admin.accessToken }), 422, 'DELIVERY_IN_PROGRESS')
    })
  })

  describe('GET /admin/events', () => {
    it('reads every event in order with a cursor, whatever happens to the outbox rows', async () => {
      const cursor = await lastCursor()
      await emit('approved')
      await emit('payout')
      await emit('approved')
      const page = await request(ctx.app, { method: 'GET', url: `/admin/events?after=${cursor}&limit=2`, token: admin.accessToken })
      expect(page.statusCode).toBe(200)
      const first = page.json().data
      expect(first.items.map((item: { event: string }) => item.event)).toEqual(['service.approved', 'payout.processed'])
      expect(first.hasMore).toBe(true)
      expect(first.items[1]).toMatchObject({ data: { amount: 12.5 }, timestamp: ctx.clock.now().toISOString() })
      expect(Object.keys(first.items[0]).sort()).toEqual(['cursor', 'data', 'event', 'id', 'timestamp'])
      expect(BigInt(first.items[1].cursor)).toBeGreaterThan(BigInt(first.items[0].cursor))
      expect(first.nextCursor).toBe(first.items[1].cursor)
      const rest = (await request(ctx.app, { method: 'GET', url: `/admin/events?after=${first.nextCursor}`, token: admin.accessToken })).json().data
      expect(rest.items.map((item: { event: string }) => item.event)).toEqual(['service.approved'])
      expect(rest.hasMore).toBe(false)
      const empty = (await request(ctx.app, { method: 'GET', url: `/admin/events?after=${rest.nextCursor}`, token: admin.accessToken })).json().data
      expect(empty).toEqual({ items: [], nextCursor: rest.nextCursor, hasMore: false })

      // The log does not depend on the outbox: its rows may be purged, the events stay.
      await ctx.database.db.execute(sql`delete from outbox_jobs`)
      const again = (await request(ctx.app, { method: 'GET', url: `/admin/events?after=${cursor}`, token: admin.accessToken })).json().data
      expect(again.items).toHaveLength(3)
    })

    it('appends an event when its change commits, before any worker runs, and never one whose change rolled back', async () => {
      const cursor = await lastCursor()
      const committed = await ctx.database.db.transaction((tx) => emitEvent(ctx.app.container.outbox, tx, catalogueEvents.serviceApproved, { serviceId: newId(), sellerId: newId() }, ctx.clock.now()))
      await expect(
        ctx.database.db.transaction(async (tx) => {
          await emitEvent(ctx.app.container.outbox, tx, catalogueEvents.serviceApproved, { serviceId: newId(), sellerId: newId() }, ctx.clock.now())
          throw new Error('the change fails after its event was written')
        }),
      ).rejects.toThrow('the change fails')
      const items = (await request(ctx.app, { method: 'GET', url: `/admin/events?after=${cursor}`, token: admin.accessToken })).json().data.items
      expect(items.map((item: { id: string }) => item.id)).toEqual([committed])
    })

    it('delivers an event once per endpoint, carrying its cursor, even if its outbox job runs twice', async () => {
      const endpoint = await createEndpoint()
      const cursor = await lastCursor()
      const id = await ctx.database.db.transaction((tx) => emitEvent(ctx.app.container.outbox, tx, catalogueEvents.serviceApproved, { serviceId: newId(), sellerId: newId() }, ctx.clock.now()))
      await ctx.app.container.webhooks.deliverEvent(id)
      await ctx.app.container.webhooks.deliverEvent(id)
      const [logged] = (await request(ctx.app, { method: 'GET', url: `/admin/events?after=${cursor}`, token: admin.accessToken })).json().data.items
      expect(logged).toMatchObject({ id, event: 'service.approved' })
      const deliveries = await ctx.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id))
      expect(deliveries).toHaveLength(1)
      expect(JSON.parse(deliveries[0]!.body)).toEqual({ event: 'service.approved', timestamp: logged.timestamp, cursor: logged.cursor, data: logged.data })
    })

    it('documents the cursor every event delivery carries, and the order the log keeps', async () => {
      type Schema = { required: string[]; properties: Record<string, { type?: string }> }
      type Document = { paths: Record<string, { get?: { description?: string } }>; webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Schema }> } } }> }
      const document = (await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json<Document>()
      for (const event of ctx.app.container.events) {
        const schema = document.webhooks[event.name]!.post.requestBody.content['application/json']!.schema
        expect(schema.required, event.name).toEqual(['event', 'timestamp', 'cursor', 'data'])
        expect(schema.properties.cursor).toMatchObject({ type: 'string' })
      }
      expect(document.paths[`${API}/admin/events`]!.get!.description).toContain('clock difference between API instances')
    })

    it('refuses a malformed cursor or limit (400) and callers who are not superusers (401, 403)', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/events?after=abc', token: admin.accessToken }), 400, 'VALIDATION_ERROR', ['after'])
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/events?after=-1', token: admin.accessToken }), 400, 'VALIDATION_ERROR', ['after'])
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/events?limit=0', token: admin.accessToken }), 400, 'VALIDATION_ERROR', ['limit'])
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/events?limit=101', token: admin.accessToken }), 400, 'VALIDATION_ERROR', ['limit'])
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/events' }), 401, 'UNAUTHENTICATED')
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/events', token: staff.accessToken }), 403, 'FORBIDDEN')
    })
  })

  it('publishes every event of the catalogue, with its data schema, as OpenAPI webhooks', async () => {
    type Document = { openapi: string; webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: { data: unknown } } }> } } }> }
    const document = (await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json<Document>()
    expect(document.openapi).toBe('3.1.0')
    for (const event of ctx.app.container.events) {
      const entry = document.webhooks[event.name]
      expect(entry, event.name).toBeDefined()
      // The served document states more than the schema (a UUID's length, for one), never less; it
      // leaves out what only the validator reads (ajv-errors' `errorMessage` on an enum).
      const documented = JSON.parse(JSON.stringify(event.data), (key, value: unknown) => (key === 'errorMessage' ? undefined : value)) as unknown
      expect(entry!.post.requestBody.content['application/json']!.schema.properties.data).toMatchObject(documented as object)
    }
    expect(Object.keys(document.webhooks)).toEqual(expect.arrayContaining(['service.approved', 'service.rejected', 'payout.processed', 'webhook.test']))
    // Listed because receivers get it, and said not to be subscribable, as `events` refuses it.
    expect((document.webhooks['webhook.test']!.post as unknown as { description: string }).description).toContain('Not an event to subscribe to')
  })
})
