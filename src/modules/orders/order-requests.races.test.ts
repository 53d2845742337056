import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { deliver, orderIn, renewSessions } from '../../../test/factories/orders.ts'
import { answerRequest, openRequest, sendRequest } from '../../../test/factories/requests.ts'
import type { TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { orderRequests } from './order-requests.table.ts'
import { orders } from './orders.table.ts'

/** Requests under concurrency: the order's row lock decides, one outcome wins, and money moves once. */
describe('order requests under concurrency', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { ORDER_REQUEST_DAYS: '2' } })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const wallet = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number }
  const moneyOf = async (orderId: string) => (await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, orderId))).map((move) => move.type).sort()
  const requestsOf = (orderId: string) => ctx.database.db.select().from(orderRequests).where(eq(orderRequests.orderId, orderId))
  const statusOf = async (orderId: string) => (await ctx.database.db.select().from(orders).where(eq(orders.id, orderId)))[0]!.status
  const eventCount = async (orderId: string, name: string) =>
    (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))).filter((row) => {
      const payload = row.payload as { event: string; data: { orderId?: string } }
      return payload.event === name && payload.data.orderId === orderId
    }).length

  it('an accept and a decline of one request at once: exactly one wins, and a partial refund moves once or not at all', async () => {
    for (let round = 0; round < 4; round++) {
      const placed = await orderIn(ctx, 'in_progress')
      const offered = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'partial_refund', amount: 30 })
      const [accept, decline] = await Promise.all([
        answerRequest(ctx, placed.buyer.accessToken, placed.orderId, offered.id, 'accept'),
        answerRequest(ctx, placed.buyer.accessToken, placed.orderId, offered.id, 'decline'),
      ])
      expect([accept.statusCode, decline.statusCode].sort()).toEqual([200, 422])
      expectError([accept, decline].find((answer) => answer.statusCode === 422)!, 422, 'INVALID_TRANSITION')
      const [row] = await requestsOf(placed.orderId)
      if (accept.statusCode === 200) {
        expect(row!.status).toBe('accepted')
        expect(await moneyOf(placed.orderId)).toEqual(['order_partial_refund', 'order_payment'])
        expect(await wallet(placed.buyer)).toMatchObject({ balance: 430, escrow: 70 })
      } else {
        expect(row!.status).toBe('declined')
        expect(await moneyOf(placed.orderId)).toEqual(['order_payment'])
        expect(await wallet(placed.buyer)).toMatchObject({ balance: 400, escrow: 100 })
      }
      expect((await eventCount(placed.orderId, 'order.request_accepted')) + (await eventCount(placed.orderId, 'order.request_declined'))).toBe(1)
    }
  })

  it('a cancellation request accepted while the seller delivers: one outcome, the money once', async () => {
    for (let round = 0; round < 4; round++) {
      const placed = await orderIn(ctx, 'in_progress')
      const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'cancellation' })
      const [accepted, delivered] = await Promise.all([answerRequest(ctx, placed.buyer.accessToken, placed.orderId, asked.id, 'accept'), deliver(ctx, placed.seller.accessToken, placed.orderId)])
      expect([accepted.statusCode, delivered.statusCode].sort()).toEqual([200, 422])
      const [row] = await requestsOf(placed.orderId)
      if (accepted.statusCode === 200) {
        expect(await statusOf(placed.orderId)).toBe('cancelled')
        expect(row!.status).toBe('accepted')
        expect(await moneyOf(placed.orderId)).toEqual(['order_payment', 'order_refund'])
        expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
        expect(await eventCount(placed.orderId, 'order.delivered')).toBe(0)
      } else {
        expect(await statusOf(placed.orderId)).toBe('delivered')
        expect(row!.status).toBe('expired')
        expect(await moneyOf(placed.orderId)).toEqual(['order_payment'])
        expect(await wallet(placed.buyer)).toMatchObject({ balance: 400, escrow: 100 })
      }
      expect(await eventCount(placed.orderId, 'order.cancelled')).toBe(accepted.statusCode === 200 ? 1 : 0)
    }
  })

  it('both parties opening a request at once leave one open request; the other is 422 REQUEST_OPEN', async () => {
    for (let round = 0; round < 4; round++) {
      const placed = await orderIn(ctx, 'in_progress')
      const reason = 'We both want to change the plan today.'
      const answers = await Promise.all([
        sendRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation', reason }),
        sendRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', reason, days: 3 }),
        sendRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'partial_refund', reason, amount: 10 }),
      ])
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 422, 422])
      for (const refused of answers.filter((answer) => answer.statusCode === 422)) expectError(refused, 422, 'REQUEST_OPEN')
      const rows = await requestsOf(placed.orderId)
      expect(rows.map((row) => row.status)).toEqual(['open'])
      expect(rows[0]!.id).toBe(answers.find((answer) => answer.statusCode === 201)!.json().data.id)
    }
  })

  it('the settling task run twice at once settles an overdue cancellation once', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'cancellation' })
    ctx.clock.advance(2 * DAY + 1000)
    await renewSessions(ctx, placed.buyer, placed.seller)
    const { orders: api } = ctx.app.container
    // Earlier tests left requests open too: all of them are overdue now, each settled once.
    const due = (await ctx.database.db.select().from(orderRequests).where(eq(orderRequests.status, 'open'))).length
    const counts = await Promise.all([api.settleDueRequests(), api.settleDueRequests()])
    expect(counts[0] + counts[1]).toBe(due)
    expect(await api.settleDueRequests()).toBe(0)
    expect(await moneyOf(placed.orderId)).toEqual(['order_payment', 'order_refund'])
    expect(await eventCount(placed.orderId, 'order.request_accepted')).toBe(1)
  })

  it('an answer racing the worker for an overdue request: it is settled once, and the answer is 422', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    const asked = await openRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation' })
    ctx.clock.advance(2 * DAY + 1000)
    await renewSessions(ctx, placed.buyer, placed.seller)
    const [settled, declined] = await Promise.all([ctx.app.container.orders.settleDueRequests(), answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'decline')])
    expectError(declined, 422, 'INVALID_TRANSITION')
    expect(settled).toBeLessThanOrEqual(1)
    expect((await requestsOf(placed.orderId)).map((row) => row.status)).toEqual(['accepted'])
    expect(await statusOf(placed.orderId)).toBe('cancelled')
    expect(await moneyOf(placed.orderId)).toEqual(['order_payment', 'order_refund'])
  })
})
