import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { createActiveService, createFundedBuyer, orderIn, placeOrder, renewSessions } from '../../../test/factories/orders.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { untilAQueryWaitsForALock } from '../../../test/setup/locks.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { services } from '../catalogue/services.table.ts'
import { conversations } from '../messaging/messaging.table.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { orders } from './orders.table.ts'

const wallet = async (ctx: TestContext, token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data as { balance: number; escrow: number }

/** Money under concurrency: the order row lock and the ledger's balance locks decide, and the books balance after each test. */
describe('orders under concurrency', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  it('an accept and a cancel of one order at the same moment: exactly one wins and money moves once', async () => {
    for (let round = 0; round < 3; round++) {
      const placed = await placeOrder(ctx)
      const put = (token: string, status: string) => request(ctx.app, { method: 'PUT', url: `/orders/${placed.orderId}/status`, token, payload: { status } })
      const [accept, cancel] = await Promise.all([put(placed.seller.accessToken, 'in_progress'), put(placed.buyer.accessToken, 'cancelled')])
      expect([accept.statusCode, cancel.statusCode].sort()).toEqual([200, 422])
      const moves = await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, placed.orderId))
      if (cancel.statusCode === 200) {
        expect(moves.map((move) => move.type).sort()).toEqual(['order_payment', 'order_refund'])
        expect(await wallet(ctx, placed.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
      } else {
        expect(moves.map((move) => move.type)).toEqual(['order_payment'])
        expect(await wallet(ctx, placed.buyer.accessToken)).toMatchObject({ balance: 400, escrow: 100 })
      }
    }
  })

  it('orders racing for the last of a balance never overdraw it', async () => {
    const services = await Promise.all([createActiveService(ctx), createActiveService(ctx), createActiveService(ctx)])
    const buyer = await createFundedBuyer(ctx, 250)
    const answers = await Promise.all(
      [0, 1, 2, 0, 1].map((index) => request(ctx.app, { method: 'POST', url: '/orders', token: buyer.accessToken, payload: { serviceId: services[index]!.serviceId, packageId: services[index]!.packageIds.basic } })),
    )
    const statuses = answers.map((answer) => answer.statusCode)
    expect(statuses.filter((status) => status === 201)).toHaveLength(2)
    expect(statuses.filter((status) => status === 422)).toHaveLength(3)
    for (const answer of answers.filter((one) => one.statusCode === 422)) expect(answer.json().error.code).toBe('INSUFFICIENT_FUNDS')
    expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 50, escrow: 200 })
  })

  it('two complete requests of one order at once pay the seller once', async () => {
    const placed = await orderIn(ctx, 'delivered')
    const put = () => request(ctx.app, { method: 'PUT', url: `/orders/${placed.orderId}/status`, token: placed.buyer.accessToken, payload: { status: 'completed' } })
    const answers = await Promise.all([put(), put()])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 422])
    expect(await wallet(ctx, placed.seller.accessToken)).toMatchObject({ balance: 90 })
  })

  it('the auto-complete job run twice at once completes the order once', async () => {
    const placed = await orderIn(ctx, 'delivered')
    ctx.clock.advance(3 * DAY + 1000)
    await renewSessions(ctx, placed.buyer, placed.seller)
    const { orders } = ctx.app.container
    const counts = await Promise.all([orders.completeDueOrders(), orders.completeDueOrders()])
    expect(counts[0] + counts[1]).toBe(1)
    expect(await orders.completeDueOrders()).toBe(0)
    expect(await wallet(ctx, placed.seller.accessToken)).toMatchObject({ balance: 90, escrow: 0 })
    const completed = (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))).filter((row) => {
      const payload = row.payload as { event: string; data: { orderId: string } }
      return payload.event === 'order.completed' && payload.data.orderId === placed.orderId
    })
    expect(completed).toHaveLength(1)
  })

  // PostgreSQL only: these need a second connection holding the service's row lock.
  describe.runIf(inject('pgTemplate') !== '')('placing while the service changes', () => {
    const place = (service: Awaited<ReturnType<typeof createActiveService>>, buyer: Awaited<ReturnType<typeof createFundedBuyer>>) =>
      request(ctx.app, { method: 'POST', url: '/orders', token: buyer.accessToken, payload: { serviceId: service.serviceId, packageId: service.packageIds.basic } })

    it('an order that waited for a pause to commit is 404 and moves and writes nothing', async () => {
      const service = await createActiveService(ctx)
      const buyer = await createFundedBuyer(ctx, 500)
      let commitPause: () => void = () => undefined
      let pauseWritten: () => void = () => undefined
      const pauseHeld = new Promise<void>((resolve) => (commitPause = resolve))
      const written = new Promise<void>((resolve) => (pauseWritten = resolve))
      const pausing = ctx.database.db.transaction(async (tx) => {
        await tx.update(services).set({ status: 'paused' }).where(eq(services.id, service.serviceId))
        pauseWritten()
        await pauseHeld
      })
      // The order is sent once the pause holds the service's row, so its share lock has to wait.
      await written
      const placing = place(service, buyer)
      await untilAQueryWaitsForALock(ctx.database.db)
      commitPause()
      await pausing
      const answer = await placing
      expect(answer.statusCode, answer.body).toBe(404)
      expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
      expect(await ctx.database.db.select().from(orders).where(eq(orders.buyerId, buyer.user.id))).toEqual([])
    })

    it('a delete and an order at the same moment: the order is placed and the delete refused, or the delete wins and the order is 404', async () => {
      for (let round = 0; round < 3; round++) {
        const service = await createActiveService(ctx)
        const buyer = await createFundedBuyer(ctx, 500)
        const [placed, removed] = await Promise.all([place(service, buyer), request(ctx.app, { method: 'DELETE', url: `/services/${service.serviceId}`, token: service.seller.accessToken })])
        const ordersOfBuyer = await ctx.database.db.select().from(orders).where(eq(orders.buyerId, buyer.user.id))
        if (placed.statusCode === 201) {
          expect(removed.statusCode, removed.body).toBe(422)
          expect(ordersOfBuyer).toHaveLength(1)
          expect(await ctx.database.db.select().from(conversations).where(eq(conversations.orderId, ordersOfBuyer[0]!.id))).toHaveLength(1)
        } else {
          expect(placed.statusCode, placed.body).toBe(404)
          expect(removed.statusCode, removed.body).toBe(200)
          expect(ordersOfBuyer).toEqual([])
          expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
        }
      }
    })
  })
})
