import { and, eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createFundedBuyer, orderIn, renewSessions } from '../../../test/factories/orders.ts'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { ledgerAccounts, ledgerTransactions } from '../wallet/ledger.table.ts'
import { orders } from './orders.table.ts'

const wallet = async (ctx: TestContext, token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data as { balance: number; escrow: number }
const tip = (ctx: TestContext, token: string | undefined, orderId: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  request(ctx.app, { method: 'POST', url: `/orders/${orderId}/tip`, token, payload, headers })
const actionsOf = (order: { allowedActions: { action: string }[] }) => order.allowedActions.map((action) => action.action)

async function revenueCents(ctx: TestContext): Promise<number> {
  // The platform's revenue is spread over sub-accounts: their sum is its balance.
  const rows = await ctx.database.db.select().from(ledgerAccounts).where(eq(ledgerAccounts.kind, 'revenue'))
  return rows.reduce((sum, row) => sum + row.balanceCents, 0)
}

async function tippedEvents(ctx: TestContext, orderId: string) {
  const rows = await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))
  return rows.map((row) => row.payload as { event: string; data: { orderId: string } }).filter((payload) => payload.event === 'order.tipped' && payload.data.orderId === orderId)
}

describe('tips (POST /orders/{orderId}/tip)', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  it('the buyer of a completed order tips the seller once: available to available, tip and tip_earning, order.tipped', async () => {
    const placed = await orderIn(ctx, 'completed')
    const before = await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.buyer.accessToken })
    expect(actionsOf(before.json().data)).toContain('tip')
    expect(before.json().data.tip).toBeNull()
    const asSeller = await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.seller.accessToken })
    expect(actionsOf(asSeller.json().data)).not.toContain('tip')
    const revenue = await revenueCents(ctx)
    const answer = await tip(ctx, placed.buyer.accessToken, placed.orderId, { amount: 12.5 })
    expect(answer.statusCode, answer.body).toBe(200)
    expect(answer.json().data).toMatchObject({ id: placed.orderId, status: 'completed', tip: 12.5 })
    expect(actionsOf(answer.json().data)).not.toContain('tip')
    expect(await wallet(ctx, placed.buyer.accessToken)).toMatchObject({ balance: 387.5, escrow: 0 })
    expect(await wallet(ctx, placed.seller.accessToken)).toMatchObject({ balance: 102.5 })
    // TIP_FEE_PERCENT is 0 by default: the platform keeps nothing of it.
    expect(await revenueCents(ctx)).toBe(revenue)
    const moves = await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, placed.orderId))
    expect(moves.map((move) => move.type).filter((type) => type.startsWith('tip')).sort()).toEqual(['tip', 'tip_earning'])
    const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId))
    expect(row).toMatchObject({ tipCents: 1250, tippedAt: ctx.clock.now() })
    const events = await tippedEvents(ctx, placed.orderId)
    expect(events.map((event) => event.data)).toEqual([{ orderId: placed.orderId, serviceId: placed.serviceId, buyerId: placed.buyer.user.id, sellerId: placed.seller.user.id, amount: 12.5, fee: 0, sellerEarning: 12.5 }])
    const check = await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: (await createUser(ctx, { isSuperuser: true, isStaff: true })).accessToken })
    expect(check.statusCode, check.body).toBe(200)
    expect(check.json().data).toMatchObject({ ok: true, problems: [] })
    expectError(await tip(ctx, placed.buyer.accessToken, placed.orderId, { amount: 5 }), 422, 'ALREADY_TIPPED')
    expect(await wallet(ctx, placed.buyer.accessToken)).toMatchObject({ balance: 387.5 })
  })

  it('refuses the seller and an order not completed with 422 NOT_TIPPABLE, a stranger with 404, no token with 401', async () => {
    const placed = await orderIn(ctx, 'completed')
    expectError(await tip(ctx, placed.seller.accessToken, placed.orderId, { amount: 5 }), 422, 'NOT_TIPPABLE')
    expectError(await tip(ctx, (await createUser(ctx)).accessToken, placed.orderId, { amount: 5 }), 404, 'NOT_FOUND')
    expectError(await tip(ctx, undefined, placed.orderId, { amount: 5 }), 401, 'UNAUTHENTICATED')
    const delivered = await orderIn(ctx, 'delivered')
    expectError(await tip(ctx, delivered.buyer.accessToken, delivered.orderId, { amount: 5 }), 422, 'NOT_TIPPABLE')
    const order = await request(ctx.app, { method: 'GET', url: `/orders/${delivered.orderId}`, token: delivered.buyer.accessToken })
    expect(actionsOf(order.json().data)).not.toContain('tip')
    expect(await wallet(ctx, placed.buyer.accessToken)).toMatchObject({ balance: 400 })
  })

  it('refuses amounts out of 1.00 to 1000.00 or with three decimals on the field, and unknown fields', async () => {
    const placed = await orderIn(ctx, 'completed')
    for (const amount of [0.99, 1000.01, 2.005, -5, '5']) expectError(await tip(ctx, placed.buyer.accessToken, placed.orderId, { amount }), 400, 'VALIDATION_ERROR', ['amount'])
    expectError(await tip(ctx, placed.buyer.accessToken, placed.orderId, {}), 400, 'VALIDATION_ERROR', ['amount'])
    expectError(await tip(ctx, placed.buyer.accessToken, placed.orderId, { amount: 5, note: 'thanks' }), 400, 'VALIDATION_ERROR')
    const atBounds = await tip(ctx, placed.buyer.accessToken, placed.orderId, { amount: 1 })
    expect(atBounds.statusCode, atBounds.body).toBe(200)
  })

  it('closes TIP_DAYS after completion', async () => {
    const placed = await orderIn(ctx, 'completed')
    ctx.clock.advance(14 * DAY)
    await renewSessions(ctx, placed.buyer, placed.seller)
    const order = await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.buyer.accessToken })
    expect(actionsOf(order.json().data)).not.toContain('tip')
    expectError(await tip(ctx, placed.buyer.accessToken, placed.orderId, { amount: 5 }), 422, 'TIP_WINDOW_CLOSED')
    expect(await tippedEvents(ctx, placed.orderId)).toEqual([])
  })

  it('is 422 INSUFFICIENT_FUNDS beyond the available balance, and nothing moves', async () => {
    const buyer = await createFundedBuyer(ctx, 150)
    const placed = await orderIn(ctx, 'completed', { buyer })
    expectError(await tip(ctx, buyer.accessToken, placed.orderId, { amount: 50.01 }), 422, 'INSUFFICIENT_FUNDS')
    expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 50, escrow: 0 })
    const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId))
    expect(row!.tipCents).toBeNull()
  })

  it('concurrent tips, and retries with one Idempotency-Key, tip once', async () => {
    const placed = await orderIn(ctx, 'completed')
    const answers = await Promise.all([1, 2, 3].map(() => tip(ctx, placed.buyer.accessToken, placed.orderId, { amount: 10 })))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 422, 422])
    const other = await orderIn(ctx, 'completed')
    const headers = { 'idempotency-key': `tip-${other.orderId}` }
    const first = await tip(ctx, other.buyer.accessToken, other.orderId, { amount: 10 }, headers)
    const again = await tip(ctx, other.buyer.accessToken, other.orderId, { amount: 10 }, headers)
    expect([first.statusCode, again.statusCode]).toEqual([200, 200])
    expect(again.headers['idempotent-replayed']).toBe('true')
    for (const order of [placed, other]) {
      const moves = await ctx.database.db.select().from(ledgerTransactions).where(and(eq(ledgerTransactions.orderId, order.orderId), eq(ledgerTransactions.type, 'tip')))
      expect(moves).toHaveLength(1)
    }
  })
})

describe('tips with TIP_FEE_PERCENT', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { TIP_FEE_PERCENT: '10', TIP_DAYS: '0.5' } })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  it('sends the fee to the platform’s revenue and the rest to the seller, within a window of half a day', async () => {
    const placed = await orderIn(ctx, 'completed')
    const revenue = await revenueCents(ctx)
    const answer = await tip(ctx, placed.buyer.accessToken, placed.orderId, { amount: 10.05 })
    expect(answer.statusCode, answer.body).toBe(200)
    // 10 % of 10.05 is 1.005, rounded half-up to 1.01.
    expect(await revenueCents(ctx)).toBe(revenue + 101)
    expect(await wallet(ctx, placed.seller.accessToken)).toMatchObject({ balance: 99.04 })
    expect((await tippedEvents(ctx, placed.orderId)).map((event) => event.data)).toEqual([expect.objectContaining({ amount: 10.05, fee: 1.01, sellerEarning: 9.04 })])
    const late = await orderIn(ctx, 'completed')
    ctx.clock.advance(DAY / 2)
    await renewSessions(ctx, late.buyer)
    expectError(await tip(ctx, late.buyer.accessToken, late.orderId, { amount: 5 }), 422, 'TIP_WINDOW_CLOSED')
  })
})
