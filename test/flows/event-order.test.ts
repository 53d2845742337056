import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { fromPool, openPool, type Database, type Tx } from '../../src/db/client.ts'
import { SECOND } from '../../src/lib/clock.ts'
import { newId } from '../../src/lib/ids.ts'
import { catalogueEvents } from '../../src/modules/catalogue/catalogue.events.ts'
import { emitEvent } from '../../src/platform/outbox/events.ts'
import type { Worker } from '../../src/platform/outbox/worker.ts'
import { createActiveService, createFundedBuyer, deliver, type ActiveService } from '../factories/orders.ts'
import { createSuperuser, type TestUser } from '../factories/users.ts'
import { createTestApp, request, type TestContext } from '../setup/test-app.ts'

interface LoggedEvent {
  id: string
  cursor: string
  event: string
  timestamp: string
  data: { orderId?: string; to?: string }
}

/** What one order's life writes to the log, in the order it happens (two events of a move share its transaction). */
const LIFE = ['order.created', 'order.status_changed:in_progress', 'order.status_changed:delivered', 'order.delivered', 'order.status_changed:completed', 'order.completed']
const label = (event: LoggedEvent) => (event.event === 'order.status_changed' ? `${event.event}:${event.data.to}` : event.event)

/**
 * The event log in occurrence order while API instances and workers run apart (decision 0117):
 * orders are placed, accepted, delivered and completed side by side, each step on another
 * instance, while two workers run the outbox and a reader polls `GET /admin/events` with `after`.
 * On PostgreSQL: three instances, each on its own pool, and two workers. On PGlite (one process):
 * one instance and its worker.
 */
describe('the event log under instances and workers running apart', () => {
  const onPostgres = inject('pgTemplate') !== ''
  const WAVES = onPostgres ? 3 : 2
  const ORDERS_PER_WAVE = onPostgres ? 8 : 3

  let ctx: TestContext
  let admin: TestUser
  let apps: FastifyInstance[]
  let workers: Worker[]
  const extra: { ctx: TestContext; database: Database }[] = []

  beforeAll(async () => {
    ctx = await createTestApp()
    apps = [ctx.app]
    if (ctx.database.kind === 'postgres') {
      const url = ctx.database.pool.options.connectionString!
      for (let n = 0; n < 2; n++) {
        const database = fromPool(openPool(url, 5))
        extra.push({ ctx: await createTestApp({ database, clock: ctx.clock }), database })
      }
      apps.push(...extra.map((instance) => instance.ctx.app))
    }
    workers = apps.slice(-2).map((app) => app.container.worker)
    admin = await createSuperuser(ctx)
  })

  afterAll(async () => {
    for (const instance of extra) {
      await instance.ctx.close()
      await instance.database.close()
    }
    await ctx.close()
  })

  async function readPage(after: string): Promise<{ items: LoggedEvent[]; nextCursor: string; hasMore: boolean }> {
    const session = await ctx.app.container.auth.issueSession(admin.user)
    const response = await request(apps[0]!, { method: 'GET', url: `/admin/events?limit=100&after=${after}`, token: session.accessToken })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data
  }

  async function readAll(): Promise<LoggedEvent[]> {
    const events: LoggedEvent[] = []
    let after = '0'
    for (;;) {
      const page = await readPage(after)
      events.push(...page.items)
      after = page.nextCursor
      if (!page.hasMore) return events
    }
  }

  it.runIf(onPostgres)('gives the cursor at commit: an event written first but committed last comes after, and a reader already past the other misses nothing', async () => {
    const start = (await readAll()).at(-1)?.cursor ?? '0'
    const emit = (tx: Tx) => emitEvent(ctx.app.container.outbox, tx, catalogueEvents.serviceApproved, { serviceId: newId(), sellerId: newId() }, ctx.clock.now())
    let written!: () => void
    let commit!: () => void
    const firstWritten = new Promise<void>((resolve) => (written = resolve))
    const mayCommit = new Promise<void>((resolve) => (commit = resolve))
    const first = ctx.database.db.transaction(async (tx) => {
      const id = await emit(tx)
      written()
      await mayCommit
      return id
    })
    await firstWritten
    const second = await ctx.database.db.transaction(emit)
    const before = await readPage(start)
    expect(before.items.map((event) => event.id)).toEqual([second])
    commit()
    const firstId = await first
    const after = await readPage(before.nextCursor)
    expect(after.items.map((event) => event.id)).toEqual([firstId])
    expect(BigInt(after.items[0]!.cursor)).toBeGreaterThan(BigInt(before.items[0]!.cursor))
  })

  it('never lists an event before one that happened before it, and a poller misses none', async () => {
    const services: ActiveService[] = [await createActiveService(ctx), await createActiveService(ctx)]
    const buyers: TestUser[] = []
    for (let n = 0; n < 4; n++) buyers.push(await createFundedBuyer(ctx, 5_000))

    // A poller reading as a consumer would: one page after each step, from where it left off.
    const polled: LoggedEvent[] = []
    let pollerAt = '0'
    let polling = Promise.resolve()
    const poll = () => {
      polling = polling.then(async () => {
        const page = await readPage(pollerAt)
        polled.push(...page.items)
        pollerAt = page.nextCursor
      })
      return polling
    }

    const ordersPlaced: string[] = []
    async function lifeOfAnOrder(index: number): Promise<void> {
      const service = services[index % services.length]!
      const buyer = buyers[index % buyers.length]!
      // Each step on the next instance, as a round-robin load balancer would send them.
      const on = (step: number) => apps[(index + step) % apps.length]!
      const placed = await request(on(0), { method: 'POST', url: '/orders', token: buyer.accessToken, payload: { serviceId: service.serviceId, packageId: service.packageIds.basic } })
      expect(placed.statusCode, placed.body).toBe(201)
      const orderId = placed.json().data.id as string
      ordersPlaced.push(orderId)
      await poll()
      const accepted = await request(on(1), { method: 'PUT', url: `/orders/${orderId}/status`, token: service.seller.accessToken, payload: { status: 'in_progress' } })
      expect(accepted.statusCode, accepted.body).toBe(200)
      await poll()
      const delivered = await deliver({ ...ctx, app: on(2) }, service.seller.accessToken, orderId)
      expect(delivered.statusCode, delivered.body).toBe(200)
      await poll()
      const completed = await request(on(3), { method: 'PUT', url: `/orders/${orderId}/status`, token: buyer.accessToken, payload: { status: 'completed' } })
      expect(completed.statusCode, completed.body).toBe(200)
      await poll()
    }

    const drain = () => Promise.all(workers.map((worker) => worker.drain()))
    for (let wave = 0; wave < WAVES; wave++) {
      // The workers run the jobs of the waves before while this wave's orders are written.
      const orders = Array.from({ length: ORDERS_PER_WAVE }, (_, n) => lifeOfAnOrder(wave * ORDERS_PER_WAVE + n))
      await Promise.all([...orders, drain()])
      ctx.clock.advance(SECOND)
    }
    await drain()
    await poll()

    const log = await readAll()
    // Per order: its six events, in the order they happened.
    for (const orderId of ordersPlaced) {
      expect(log.filter((event) => event.data.orderId === orderId).map(label), orderId).toEqual(LIFE)
    }
    // Across orders: the waves follow each other, so time never goes backwards in the log.
    const times = log.map((event) => Date.parse(event.timestamp))
    expect(times.filter((time, n) => n > 0 && time < times[n - 1]!)).toEqual([])
    // A consumer polling with `after` while the events were written saw every one, once, in log order.
    expect(polled.map((event) => event.cursor)).toEqual(log.map((event) => event.cursor))
    expect(new Set(log.map((event) => event.id)).size).toBe(log.length)
  })
})
