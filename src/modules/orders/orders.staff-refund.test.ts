import { and, eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { orderIn, renewSessions, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { auditLog } from '../audit/audit.table.ts'
import { clearances } from '../wallet/clearance.table.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { orders } from './orders.table.ts'

const NOTE = 'The source files the package promised never arrived; part of the price goes back to the buyer.'

interface OrderAnswer {
  status: string
  refunded: number
  sellerEarning: number
  allowedActions: { action: string; status: string; reasonRequired: boolean }[]
}

/** Staff refunds of completed orders while their earnings clear (CLEARANCE_DAYS 7 here). */
describe('POST /admin/orders/{orderId}/refund', () => {
  let ctx: TestContext
  let manager: TestUser
  let viewer: TestUser
  beforeAll(async () => {
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '7' } })
    manager = await createUser(ctx, { permissions: ['view_orders', 'manage_orders'] })
    viewer = await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  /** `token` null: no token at all. */
  const refund = (orderId: string, payload: object, token: string | null = manager.accessToken) =>
    request(ctx.app, { method: 'POST', url: `/admin/orders/${orderId}/refund`, token: token ?? undefined, payload })
  const wallet = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; clearing: number }
  const order = async (orderId: string, user: TestUser) => (await request(ctx.app, { method: 'GET', url: `/orders/${orderId}`, token: user.accessToken })).json().data as OrderAnswer
  const actionsOf = (answer: OrderAnswer) => answer.allowedActions.map((action) => action.action)
  const moneyOf = async (orderId: string) => (await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, orderId))).map((move) => move.type).sort()
  const auditOf = (orderId: string) => ctx.database.db.select().from(auditLog).where(and(eq(auditLog.targetId, orderId), eq(auditLog.action, 'order.staff_refund')))
  const recordsOf = (orderId: string) => ctx.database.db.select().from(clearances).where(eq(clearances.orderId, orderId)).orderBy(clearances.createdAt, clearances.id)
  const refundedEvents = async (orderId: string) =>
    (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event')))
      .map((row) => row.payload as { event: string; data: Record<string, unknown> })
      .filter((payload) => payload.event === 'order.refunded' && payload.data.orderId === orderId)
  const clearDue = async (...people: TestUser[]) => {
    await ctx.app.container.wallet.clearDueEarnings()
    await renewSessions(ctx, manager, viewer, ...people)
  }
  const tipped = async (placed: PlacedOrder, amount: number) => expect((await request(ctx.app, { method: 'POST', url: `/orders/${placed.orderId}/tip`, token: placed.buyer.accessToken, payload: { amount } })).statusCode).toBe(200)

  it('gives part of the seller’s clearing earning back to the buyer, with its records, and the worker later clears only the rest', async () => {
    const placed = await orderIn(ctx, 'completed')
    expect(actionsOf(await order(placed.orderId, manager))).toEqual(['staff_refund'])
    expect((await order(placed.orderId, manager)).allowedActions).toEqual([{ action: 'staff_refund', status: 'completed', reasonRequired: true }])
    for (const other of [viewer, placed.buyer, placed.seller]) expect(actionsOf(await order(placed.orderId, other))).not.toContain('staff_refund')

    const grossVolume = async () => (await request(ctx.app, { method: 'GET', url: '/admin/stats', token: manager.accessToken })).json().data.orders.grossVolume as number
    const volumeBefore = await grossVolume()
    const answer = await refund(placed.orderId, { amount: 30, note: NOTE })
    expect(answer.statusCode, answer.body).toBe(200)
    // What went back to the buyer after completion leaves the gross volume as well.
    expect(await grossVolume()).toBeCloseTo(volumeBefore - 30, 2)
    expect(answer.json().data).toMatchObject({ id: placed.orderId, status: 'completed', total: 100, platformFee: 10, refunded: 30, sellerEarning: 60 })
    expect(actionsOf(answer.json().data)).toEqual(['staff_refund'])
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 430, clearing: 0 })
    expect(await wallet(placed.seller)).toMatchObject({ balance: 0, clearing: 60 })
    expect(await moneyOf(placed.orderId)).toEqual(['earning_reversal', 'order_earning', 'order_earning', 'order_payment', 'staff_refund'])
    const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId))
    expect(row).toMatchObject({ refundedCents: 3000, status: 'completed' })
    expect(await recordsOf(placed.orderId)).toEqual([expect.objectContaining({ amountCents: 9000, reversedCents: 3000, settledAt: null })])
    expect(await auditOf(placed.orderId)).toEqual([
      expect.objectContaining({
        actorId: manager.user.id,
        targetType: 'order',
        reason: NOTE,
        before: { refunded: 0, clearing: 90 },
        after: { refunded: 30, clearing: 60, amount: 30 },
        requestId: answer.headers['x-request-id'],
      }),
    ])
    expect((await refundedEvents(placed.orderId)).map((event) => event.data)).toEqual([
      { orderId: placed.orderId, serviceId: placed.serviceId, buyerId: placed.buyer.user.id, sellerId: placed.seller.user.id, amount: 30, by: manager.user.id },
    ])
    // The buyer reads it too; the statement lines name their side.
    expect(await order(placed.orderId, placed.buyer)).toMatchObject({ refunded: 30, sellerEarning: 60 })
    const buyerLines = (await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: placed.buyer.accessToken })).json().data.items
    expect(buyerLines[0]).toMatchObject({ type: 'staff_refund', account: 'available', amount: 30, orderId: placed.orderId })
    const sellerLines = (await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: placed.seller.accessToken })).json().data.items
    expect(sellerLines[0]).toMatchObject({ type: 'earning_reversal', account: 'clearing', amount: -30, balanceAfter: 60, orderId: placed.orderId })

    while ((await ctx.app.container.worker.runOnce()).processed > 0);
    const mails = ctx.mailer.sent.filter((mail) => mail.subject === `Refund: ${placed.order.serviceTitle as string}`)
    expect(mails.find((mail) => mail.to === placed.buyer.user.email)?.text).toContain('30.00 was refunded to your wallet')
    expect(mails.find((mail) => mail.to === placed.seller.user.email)?.text).toContain('30.00 of your earnings from it, still clearing, went back to the buyer')
    expect(mails.find((mail) => mail.to === placed.seller.user.email)?.text).toContain(NOTE)

    ctx.clock.advance(7 * DAY)
    await clearDue(placed.buyer, placed.seller)
    expect(await wallet(placed.seller)).toMatchObject({ balance: 60, clearing: 0 })
    expect(actionsOf(await order(placed.orderId, manager))).toEqual([])
    expectError(await refund(placed.orderId, { amount: 1, note: NOTE }), 422, 'ALREADY_CLEARED')
  })

  it('refuses more than what is still clearing from the order with 400 on amount naming the bound, after a first refund too', async () => {
    const placed = await orderIn(ctx, 'completed')
    const over = await refund(placed.orderId, { amount: 90.01, note: NOTE })
    expectError(over, 400, 'VALIDATION_ERROR', ['amount'])
    expect(over.json().error.details[0].message).toBe('must be at most 90.00, what the seller still has clearing from this order')
    expect((await refund(placed.orderId, { amount: 89.5, note: NOTE })).statusCode).toBe(200)
    const again = await refund(placed.orderId, { amount: 0.51, note: NOTE })
    expect(again.json().error.details[0].message).toContain('at most 0.50')
    const last = await refund(placed.orderId, { amount: 0.5, note: NOTE })
    expect(last.json().data).toMatchObject({ refunded: 90, sellerEarning: 0, allowedActions: [] })
    // Refunded whole, the earning is settled: there is nothing left to clear or to refund.
    expect(await recordsOf(placed.orderId)).toEqual([expect.objectContaining({ reversedCents: 9000, settledAt: ctx.clock.now(), clearanceTransactionId: null })])
    expectError(await refund(placed.orderId, { amount: 0.01, note: NOTE }), 422, 'ALREADY_CLEARED')
    expect(await wallet(placed.seller)).toMatchObject({ balance: 0, clearing: 0 })
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 490 })
  })

  it('a completion’s earning that cleared and a later tip still clearing: only the tip can be refunded, then nothing', async () => {
    const placed = await orderIn(ctx, 'completed')
    ctx.clock.advance(2 * DAY)
    await renewSessions(ctx, placed.buyer, placed.seller)
    await tipped(placed, 20)
    ctx.clock.advance(5 * DAY)
    await clearDue(placed.buyer, placed.seller)
    expect(await wallet(placed.seller)).toMatchObject({ balance: 90, clearing: 20 })
    expect(actionsOf(await order(placed.orderId, manager))).toEqual(['staff_refund'])
    const over = await refund(placed.orderId, { amount: 20.01, note: NOTE })
    expect(over.json().error.details).toEqual([{ field: 'amount', message: 'must be at most 20.00, what the seller still has clearing from this order' }])
    const partial = await refund(placed.orderId, { amount: 15, note: NOTE })
    expect(partial.statusCode, partial.body).toBe(200)
    expect(partial.json().data).toMatchObject({ refunded: 15, tip: 20 })
    expect(await wallet(placed.seller)).toMatchObject({ balance: 90, clearing: 5 })
    ctx.clock.advance(2 * DAY)
    await clearDue(placed.buyer, placed.seller)
    expect(await wallet(placed.seller)).toMatchObject({ balance: 95, clearing: 0 })
    expectError(await refund(placed.orderId, { amount: 1, note: NOTE }), 422, 'ALREADY_CLEARED')
    expect((await recordsOf(placed.orderId)).map((record) => [record.amountCents, record.reversedCents, record.clearanceTransactionId !== null])).toEqual([
      [9000, 0, true],
      [2000, 1500, true],
    ])
  })

  it('a refund larger than the completion’s earning reaches the tip still clearing, oldest first', async () => {
    const placed = await orderIn(ctx, 'completed')
    await tipped(placed, 10)
    const answer = await refund(placed.orderId, { amount: 95, note: NOTE })
    expect(answer.statusCode, answer.body).toBe(200)
    expect(answer.json().data).toMatchObject({ refunded: 95, tip: 10 })
    expect((await recordsOf(placed.orderId)).map((record) => [record.amountCents, record.reversedCents, record.settledAt !== null])).toEqual([
      [9000, 9000, true],
      [1000, 500, false],
    ])
    expect(await wallet(placed.seller)).toMatchObject({ balance: 0, clearing: 5 })
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 485 })
  })

  it('two refunds at once take no more than what is clearing: one wins, the other is 400 on amount', async () => {
    const placed = await orderIn(ctx, 'completed')
    const answers = await Promise.all([refund(placed.orderId, { amount: 60, note: NOTE }), refund(placed.orderId, { amount: 60, note: NOTE })])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 400])
    expect(answers.find((answer) => answer.statusCode === 400)!.json().error.details[0].message).toContain('at most 30.00')
    expect(await wallet(placed.seller)).toMatchObject({ clearing: 30 })
    expect(await auditOf(placed.orderId)).toHaveLength(1)
  })

  it('a refund and the worker’s clearance at the same moment: the money moves once either way', async () => {
    for (let round = 0; round < 3; round++) {
      const placed = await orderIn(ctx, 'completed')
      ctx.clock.advance(7 * DAY)
      await renewSessions(ctx, manager, viewer, placed.buyer, placed.seller)
      const [answer] = await Promise.all([refund(placed.orderId, { amount: 40, note: NOTE }), ctx.app.container.wallet.clearDueEarnings()])
      const seller = await wallet(placed.seller)
      if (answer.statusCode === 200) {
        // The worker skipped the earning the refund held, or cleared the rest after it: 50.00 either way.
        expect(seller.balance + seller.clearing).toBe(50)
        await clearDue(placed.seller)
        expect(await wallet(placed.seller)).toMatchObject({ balance: 50, clearing: 0 })
        expect(await wallet(placed.buyer)).toMatchObject({ balance: 440 })
      } else {
        expectError(answer, 422, 'ALREADY_CLEARED')
        expect(seller).toMatchObject({ balance: 90, clearing: 0 })
        expect(await wallet(placed.buyer)).toMatchObject({ balance: 400 })
      }
    }
  })

  describe('refusals: nothing moves', () => {
    let placed: PlacedOrder
    beforeAll(async () => {
      placed = await orderIn(ctx, 'completed')
    })
    afterEach(async () => {
      expect(await moneyOf(placed.orderId)).toEqual(['order_earning', 'order_earning', 'order_payment'])
      expect(await auditOf(placed.orderId)).toEqual([])
      const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId))
      expect(row!.refundedCents).toBe(0)
    })

    it('401 without a token', async () => {
      expectError(await refund(placed.orderId, { amount: 10, note: NOTE }, null), 401, 'UNAUTHENTICATED')
    })

    it('403 for staff without manage_orders and for the parties', async () => {
      expectError(await refund(placed.orderId, { amount: 10, note: NOTE }, viewer.accessToken), 403, 'FORBIDDEN')
      expectError(await refund(placed.orderId, { amount: 10, note: NOTE }, placed.buyer.accessToken), 403, 'FORBIDDEN')
      expectError(await refund(placed.orderId, { amount: 10, note: NOTE }, placed.seller.accessToken), 403, 'FORBIDDEN')
    })

    it('404 for an unknown order and a malformed id', async () => {
      expectError(await refund('0196a000-0000-7000-8000-000000000000', { amount: 10, note: NOTE }), 404, 'NOT_FOUND')
      expectError(await refund('not-an-order', { amount: 10, note: NOTE }), 404, 'NOT_FOUND')
    })

    it('400 on amount: zero, negative, three decimals, a string, missing', async () => {
      for (const amount of [0, -1, 10.005, '10']) expectError(await refund(placed.orderId, { amount, note: NOTE }), 400, 'VALIDATION_ERROR', ['amount'])
      expectError(await refund(placed.orderId, { note: NOTE }), 400, 'VALIDATION_ERROR', ['amount'])
    })

    it('400 on note: missing, blank or over 1000 characters; 400 on an unknown field', async () => {
      expectError(await refund(placed.orderId, { amount: 10 }), 400, 'VALIDATION_ERROR', ['note'])
      expectError(await refund(placed.orderId, { amount: 10, note: '   ' }), 400, 'VALIDATION_ERROR', ['note'])
      expectError(await refund(placed.orderId, { amount: 10, note: 'x'.repeat(1001) }), 400, 'VALIDATION_ERROR', ['note'])
      expectError(await refund(placed.orderId, { amount: 10, note: NOTE, to: 'buyer' }), 400, 'VALIDATION_ERROR')
    })
  })

  it('422 INVALID_TRANSITION on an order that is not completed', async () => {
    for (const status of ['delivered', 'disputed', 'cancelled'] as const) {
      const placed = await orderIn(ctx, status)
      expectError(await refund(placed.orderId, { amount: 10, note: NOTE }), 422, 'INVALID_TRANSITION')
      expect(await auditOf(placed.orderId)).toEqual([])
      expect(actionsOf(await order(placed.orderId, manager))).not.toContain('staff_refund')
    }
  })
})

describe('staff refunds with CLEARANCE_DAYS=0', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '0' } })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  it('finds nothing clearing on a completed order: 422 ALREADY_CLEARED, and no staff_refund among the actions', async () => {
    const manager = await createUser(ctx, { permissions: ['view_orders', 'manage_orders'] })
    const placed = await orderIn(ctx, 'completed')
    expectError(await request(ctx.app, { method: 'POST', url: `/admin/orders/${placed.orderId}/refund`, token: manager.accessToken, payload: { amount: 10, note: NOTE } }), 422, 'ALREADY_CLEARED')
    const seen = (await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: manager.accessToken })).json().data as OrderAnswer
    expect(seen.allowedActions).toEqual([])
  })
})
