import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { answerRequest, openRequest, sendRequest } from '../../../test/factories/requests.ts'
import { moveOrder, orderIn, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type ErrorJson, type TestContext } from '../../../test/setup/test-app.ts'
import { createLedgerRepository } from '../wallet/ledger.repository.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { orders } from './orders.table.ts'

const NOTE = 'Half of the labels were delivered, the rest never came.'

/**
 * Partial refunds: money out of escrow at once, and every later outcome (completion, cancellation,
 * split or all-or-nothing resolution) settles only what is left, with the fee on what is left.
 * The Basic order holds 100.00 with a fee of 10.00 (10 %); buyers start with 500.00.
 */
describe('partial refunds and what is left in escrow', () => {
  let ctx: TestContext
  let arbiter: TestUser
  let manager: TestUser
  let root: TestUser
  beforeAll(async () => {
    ctx = await createTestApp({ env: { PLATFORM_FEE_PERCENT: '10' } })
    arbiter = await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] })
    manager = await createUser(ctx, { permissions: ['view_orders', 'manage_orders'] })
    root = await createSuperuser(ctx)
  })
  afterAll(() => ctx.close())
  afterEach(async () => {
    await expectBooksBalance(ctx)
    const check = await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: root.accessToken })
    expect(check.json().data).toMatchObject({ ok: true, problems: [] })
  })

  const wallet = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number }
  const revenue = () => createLedgerRepository(ctx.database.db).platformBalance('revenue')
  const moneyOf = async (orderId: string) => (await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, orderId))).map((move) => move.type).sort()
  const rowOf = async (orderId: string) => (await ctx.database.db.select().from(orders).where(eq(orders.id, orderId)))[0]!
  const stats = async () => (await request(ctx.app, { method: 'GET', url: '/admin/stats', token: arbiter.accessToken })).json().data.orders as { grossVolume: number }

  /** The seller's partial refund of `amount`, accepted by the buyer; answers the order after it. */
  async function refund(placed: PlacedOrder, amount: number) {
    const offered = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'partial_refund', amount })
    const accepted = await answerRequest(ctx, placed.buyer.accessToken, placed.orderId, offered.id, 'accept')
    expect(accepted.statusCode, accepted.body).toBe(200)
    return accepted.json().data
  }

  it('moves the amount from escrow to the buyer at once; the total stays, refunded grows and the fee follows what is left', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    const order = await refund(placed, 25)
    expect(order).toMatchObject({ status: 'in_progress', total: 100, refunded: 25, platformFee: 7.5, sellerEarning: 67.5 })
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 425, escrow: 75 })
    expect(await moneyOf(placed.orderId)).toEqual(['order_partial_refund', 'order_payment'])
    const [move] = await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.type, 'order_partial_refund'))
    expect(move).toMatchObject({ orderId: placed.orderId, description: `Partial refund: ${placed.order.serviceTitle as string}` })
    expect(await rowOf(placed.orderId)).toMatchObject({ totalCents: 10_000, refundedCents: 2500, platformFeeCents: 750, placementFeeCents: 1000 })
    const statement = await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: placed.buyer.accessToken })
    expect(statement.json().data.items[0]).toMatchObject({ type: 'order_partial_refund', amount: 25 })
  })

  it('completion after a partial refund pays exactly what is left minus the fee on it, and gross volume counts what was paid', async () => {
    const placed = await orderIn(ctx, 'delivered')
    await refund(placed, 33.35)
    const revenueBefore = await revenue()
    const volumeBefore = (await stats()).grossVolume
    const completed = await moveOrder(ctx, placed.buyer.accessToken, placed.orderId, 'completed')
    // 66.65 left: a fee of 6.665 rounds half-up to 6.67, the seller gets 59.98.
    expect(completed).toMatchObject({ status: 'completed', total: 100, refunded: 33.35, platformFee: 6.67, sellerEarning: 59.98 })
    expect(await wallet(placed.seller)).toMatchObject({ balance: 59.98, escrow: 0 })
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 433.35, escrow: 0 })
    expect((await revenue()) - revenueBefore).toBe(667)
    expect((await stats()).grossVolume).toBeCloseTo(volumeBefore + 66.65, 2)
  })

  it('two partial refunds in turn: the fee on what is left keeps the rate fixed at placement', async () => {
    const placed = await orderIn(ctx, 'delivered')
    // 99.95 left: 10 % is 9.995, 10.00 rounded half-up.
    expect(await refund(placed, 0.05)).toMatchObject({ refunded: 0.05, platformFee: 10, sellerEarning: 89.95 })
    // 99.94 left: 10 % is 9.994, so 9.99 (a rate read back from the fee after the first refund, 10.00 on 99.95, would give 10.00).
    expect(await refund(placed, 0.01)).toMatchObject({ refunded: 0.06, platformFee: 9.99, sellerEarning: 89.95 })
    await moveOrder(ctx, placed.buyer.accessToken, placed.orderId, 'completed')
    expect(await wallet(placed.seller)).toMatchObject({ balance: 89.95, escrow: 0 })
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 400.06, escrow: 0 })
  })

  it('a cancellation after a partial refund returns only what is left', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    await refund(placed, 40)
    const asked = await openRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation' })
    const cancelled = await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'accept')
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', refunded: 40 })
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
    expect(await moneyOf(placed.orderId)).toEqual(['order_partial_refund', 'order_payment', 'order_refund'])
  })

  it('a staff cancel after a partial refund returns only what is left', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    await refund(placed, 10)
    const cancelled = await request(ctx.app, { method: 'POST', url: `/admin/orders/${placed.orderId}/cancel`, token: manager.accessToken, payload: {} })
    expect(cancelled.statusCode, cancelled.body).toBe(200)
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
  })

  it('a partial refund must leave something in escrow: the bound is what is left after earlier ones', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    await refund(placed, 60)
    const over = await sendRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'partial_refund', reason: 'A second refund for the delay', amount: 40 })
    expectError(over, 400, 'VALIDATION_ERROR', ['amount'])
    expect(over.json<ErrorJson>().error.details[0]!.message).toContain('40.00')
    expect((await refund(placed, 39.99)).refunded).toBe(99.99)
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 499.99, escrow: 0.01 })
    await moveOrder(ctx, placed.seller.accessToken, placed.orderId, 'disputed', 'Nothing left to argue about')
    await moveOrder(ctx, arbiter.accessToken, placed.orderId, 'cancelled', NOTE)
    expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
  })

  describe('dispute resolutions after a partial refund settle only what is left', () => {
    const resolve = (orderId: string, refundAmount: number) => request(ctx.app, { method: 'POST', url: `/admin/orders/${orderId}/resolve`, token: arbiter.accessToken, payload: { refundAmount, note: NOTE } })

    it('a split is bounded by what is left (400 naming it) and divides it, the fee on the seller’s side', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      await refund(placed, 30)
      await moveOrder(ctx, placed.buyer.accessToken, placed.orderId, 'disputed', NOTE)
      const over = await resolve(placed.orderId, 70.01)
      expectError(over, 400, 'VALIDATION_ERROR', ['refundAmount'])
      expect(over.json<ErrorJson>().error.details[0]!.message).toContain('70.00')
      const revenueBefore = await revenue()
      const volumeBefore = (await stats()).grossVolume
      const resolved = await resolve(placed.orderId, 20)
      expect(resolved.statusCode, resolved.body).toBe(200)
      // 70.00 left: 20.00 back to the buyer, 50.00 to the seller side, 5.00 of it the fee.
      expect(resolved.json().data).toMatchObject({ status: 'completed', total: 100, refunded: 50, platformFee: 5, sellerEarning: 45 })
      expect(await wallet(placed.buyer)).toMatchObject({ balance: 450, escrow: 0 })
      expect(await wallet(placed.seller)).toMatchObject({ balance: 45, escrow: 0 })
      expect((await revenue()) - revenueBefore).toBe(500)
      expect((await stats()).grossVolume).toBeCloseTo(volumeBefore + 50, 2)
    })

    it('the whole of what is left refunded cancels the order', async () => {
      const placed = await orderIn(ctx, 'delivered')
      await refund(placed, 30)
      await moveOrder(ctx, placed.buyer.accessToken, placed.orderId, 'disputed', NOTE)
      expect((await resolve(placed.orderId, 70)).json().data).toMatchObject({ status: 'cancelled', refunded: 100, platformFee: 0, sellerEarning: 0 })
      expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
    })

    it('all-or-nothing: completed pays the seller what is left minus its fee; cancelled refunds what is left', async () => {
      const toSeller = await orderIn(ctx, 'delivered')
      await refund(toSeller, 20)
      await moveOrder(ctx, toSeller.buyer.accessToken, toSeller.orderId, 'disputed', NOTE)
      expect(await moveOrder(ctx, arbiter.accessToken, toSeller.orderId, 'completed', NOTE)).toMatchObject({ refunded: 20, platformFee: 8, sellerEarning: 72 })
      expect(await wallet(toSeller.seller)).toMatchObject({ balance: 72, escrow: 0 })
      const toBuyer = await orderIn(ctx, 'in_progress')
      await refund(toBuyer, 20)
      await moveOrder(ctx, toBuyer.seller.accessToken, toBuyer.orderId, 'disputed', NOTE)
      await moveOrder(ctx, arbiter.accessToken, toBuyer.orderId, 'cancelled', NOTE)
      expect(await wallet(toBuyer.buyer)).toMatchObject({ balance: 500, escrow: 0 })
    })
  })

  it('gross volume counts a split-completed order at what the seller side was paid for, not its total', async () => {
    const placed = await orderIn(ctx, 'disputed')
    const before = (await stats()).grossVolume
    expect((await resolve(placed.orderId)).statusCode).toBe(200)
    expect((await stats()).grossVolume).toBeCloseTo(before + 60, 2)
    await ctx.app.container.worker.runPeriodic()
    expect((await stats()).grossVolume).toBeCloseTo(before + 60, 2)

    function resolve(orderId: string) {
      return request(ctx.app, { method: 'POST', url: `/admin/orders/${orderId}/resolve`, token: arbiter.accessToken, payload: { refundAmount: 40, note: NOTE } })
    }
  })
})
