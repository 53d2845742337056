import { and, eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { createFundedBuyer, orderIn, renewSessions, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { foldStatCounters } from '../../platform/statistics/statistics.ts'
import { users } from '../users/users.table.ts'
import { clearances } from './clearance.table.ts'
import { ledgerTransactions } from './ledger.table.ts'
import { walletModule } from './wallet.module.ts'

interface WalletAnswer {
  balance: number
  escrow: number
  pendingPayouts: number
  clearing: number
  nextClearingAt: string | null
  currency: string
}

interface StatementLine {
  type: string
  account: 'available' | 'clearing'
  amount: number
  balanceAfter: number
  orderId: string | null
  availableAt: string | null
  createdAt: string
}

const wallet = async (ctx: TestContext, user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as WalletAnswer
const statement = async (ctx: TestContext, user: TestUser, query = '') => {
  const answer = await request(ctx.app, { method: 'GET', url: `/wallet/transactions${query}`, token: user.accessToken })
  expect(answer.statusCode, answer.body).toBe(200)
  return answer.json().data.items as StatementLine[]
}
const tip = (ctx: TestContext, placed: PlacedOrder, amount: number) => request(ctx.app, { method: 'POST', url: `/orders/${placed.orderId}/tip`, token: placed.buyer.accessToken, payload: { amount } })
const recordsOf = (ctx: TestContext, orderId: string) => ctx.database.db.select().from(clearances).where(eq(clearances.orderId, orderId)).orderBy(clearances.createdAt, clearances.id)
const clearancesOf = async (ctx: TestContext, orderId: string) =>
  (await ctx.database.db.select().from(ledgerTransactions).where(and(eq(ledgerTransactions.orderId, orderId), eq(ledgerTransactions.type, 'clearance')))).length
const iso = (ctx: TestContext, plusMs = 0) => new Date(ctx.clock.now().getTime() + plusMs).toISOString()

/** Earnings clear for CLEARANCE_DAYS (7 here) before they become available: the wallet, the statement, the worker, payouts. */
describe('clearance of earnings', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '7' } })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  it('a completed order’s earning is clearing: GET /wallet shows it with nextClearingAt, the statement with availableAt, and a payout cannot take it', async () => {
    const placed = await orderIn(ctx, 'completed')
    const completedAt = ctx.clock.now()
    const availableAt = new Date(completedAt.getTime() + 7 * DAY).toISOString()
    expect(await wallet(ctx, placed.seller)).toEqual({ balance: 0, escrow: 0, pendingPayouts: 0, clearing: 90, nextClearingAt: availableAt, currency: 'USD' })
    expect(await statement(ctx, placed.seller)).toEqual([
      { id: expect.any(String), type: 'order_earning', account: 'clearing', amount: 90, balanceAfter: 90, description: `Earning: ${placed.order.serviceTitle as string}`, orderId: placed.orderId, payoutId: null, availableAt, createdAt: completedAt.toISOString() },
    ])
    expect(await statement(ctx, placed.seller, '?account=available')).toEqual([])
    expect(await recordsOf(ctx, placed.orderId)).toEqual([expect.objectContaining({ userId: placed.seller.user.id, amountCents: 9000, reversedCents: 0, availableAt: new Date(availableAt), settledAt: null, clearanceTransactionId: null })])

    await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, placed.seller.user.id))
    expectError(await request(ctx.app, { method: 'POST', url: '/wallet/payout', token: placed.seller.accessToken, payload: { amount: 20, method: 'paypal', details: { email: 'me@example.test' } } }), 422, 'INSUFFICIENT_FUNDS')
    expect(await wallet(ctx, placed.seller)).toMatchObject({ balance: 0, clearing: 90, pendingPayouts: 0 })
  })

  it('the worker moves it to available CLEARANCE_DAYS later, once, as a clearance pair on the statement', async () => {
    const placed = await orderIn(ctx, 'completed')
    const availableAt = iso(ctx, 7 * DAY)
    const { wallet: api } = ctx.app.container
    ctx.clock.advance(7 * DAY - 1)
    expect(await recordsOf(ctx, placed.orderId)).toEqual([expect.objectContaining({ settledAt: null })])
    await api.clearDueEarnings()
    expect((await recordsOf(ctx, placed.orderId))[0]!.settledAt).toBeNull()
    ctx.clock.advance(1)
    expect(await api.clearDueEarnings()).toBeGreaterThanOrEqual(1)
    expect(await api.clearDueEarnings()).toBe(0)
    await renewSessions(ctx, placed.seller)
    expect(await wallet(ctx, placed.seller)).toMatchObject({ balance: 90, clearing: 0, nextClearingAt: null })
    const [record] = await recordsOf(ctx, placed.orderId)
    expect(record).toMatchObject({ settledAt: new Date(availableAt), reversedCents: 0 })
    expect(record!.clearanceTransactionId).not.toBeNull()
    const [cleared] = await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.id, record!.clearanceTransactionId!))
    expect(cleared).toMatchObject({ type: 'clearance', orderId: placed.orderId, description: `Cleared: Earning: ${placed.order.serviceTitle as string}` })
    const lines = await statement(ctx, placed.seller)
    expect(lines.map((line) => [line.type, line.account, line.amount, line.balanceAfter, line.availableAt])).toEqual([
      ['clearance', 'available', 90, 90, null],
      ['clearance', 'clearing', -90, 0, null],
      ['order_earning', 'clearing', 90, 90, availableAt],
    ])
    expect((await statement(ctx, placed.seller, '?account=clearing')).map((line) => line.type)).toEqual(['clearance', 'order_earning'])
    expect(await clearancesOf(ctx, placed.orderId)).toBe(1)
  })

  it('a tip and the seller’s part of a split resolution clear as earnings of their own, each at its time', async () => {
    const placed = await orderIn(ctx, 'completed')
    const earningAt = iso(ctx, 7 * DAY)
    ctx.clock.advance(DAY)
    await renewSessions(ctx, placed.buyer, placed.seller)
    expect((await tip(ctx, placed, 10)).statusCode).toBe(200)
    const tipAt = iso(ctx, 7 * DAY)
    expect(await wallet(ctx, placed.seller)).toMatchObject({ balance: 0, clearing: 100, nextClearingAt: earningAt })
    expect((await statement(ctx, placed.seller))[0]).toMatchObject({ type: 'tip_earning', account: 'clearing', amount: 10, availableAt: tipAt })

    const disputed = await orderIn(ctx, 'disputed')
    const arbiter = await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] })
    const resolved = await request(ctx.app, { method: 'POST', url: `/admin/orders/${disputed.orderId}/resolve`, token: arbiter.accessToken, payload: { refundAmount: 40, note: 'Half of it was delivered' } })
    expect(resolved.statusCode, resolved.body).toBe(200)
    expect(await wallet(ctx, disputed.seller)).toMatchObject({ balance: 0, clearing: 54, nextClearingAt: iso(ctx, 7 * DAY) })
    // The buyer's refund is theirs at once: only earnings clear.
    expect(await wallet(ctx, disputed.buyer)).toMatchObject({ balance: 440, clearing: 0 })

    ctx.clock.advance(6 * DAY)
    await ctx.app.container.wallet.clearDueEarnings()
    await renewSessions(ctx, placed.seller, disputed.seller)
    expect(await wallet(ctx, placed.seller)).toMatchObject({ balance: 90, clearing: 10, nextClearingAt: tipAt })
    ctx.clock.advance(DAY)
    await ctx.app.container.wallet.clearDueEarnings()
    await renewSessions(ctx, placed.seller, disputed.seller)
    expect(await wallet(ctx, placed.seller)).toMatchObject({ balance: 100, clearing: 0, nextClearingAt: null })
    expect(await wallet(ctx, disputed.seller)).toMatchObject({ balance: 54, clearing: 0 })
    expect(await clearancesOf(ctx, placed.orderId)).toBe(2)
  })

  it('two periodic runs of two workers at once clear every due earning exactly once', async () => {
    const completed: PlacedOrder[] = []
    for (let index = 0; index < 6; index++) completed.push(await orderIn(ctx, 'completed'))
    ctx.clock.advance(7 * DAY)
    const second = await createTestApp({ database: ctx.database, clock: ctx.clock, env: { CLEARANCE_DAYS: '7' } })
    try {
      const ran = await Promise.all([ctx.app.container.worker.runPeriodic(), second.app.container.worker.runPeriodic()])
      for (const tasks of ran) expect(tasks).toContain('clear-earnings')
    } finally {
      await second.app.close()
    }
    for (const placed of completed) {
      expect(await clearancesOf(ctx, placed.orderId)).toBe(1)
      await renewSessions(ctx, placed.seller)
      expect(await wallet(ctx, placed.seller)).toMatchObject({ balance: 90, clearing: 0 })
    }
  })

  it('declares the clearance as a periodic task of every worker, run every WORKER_TICK_SECONDS', () => {
    const tasks = walletModule.periodic!(ctx.app.container.wallet, { config: { ...ctx.config, workerTickMs: 5000 } } as Parameters<NonNullable<typeof walletModule.periodic>>[1])
    expect(tasks.map((task) => [task.name, task.everyMs])).toEqual([['clear-earnings', 5000]])
  })

  it('the admin statistics count what is clearing, and the reconciliation check compares each clearing balance with its earnings', async () => {
    const root = await createSuperuser(ctx)
    const stats = async () => {
      await foldStatCounters(ctx.database.db)
      return (await request(ctx.app, { method: 'GET', url: '/admin/stats', token: root.accessToken })).json().data.wallet as { clearingHeld: number }
    }
    const before = (await stats()).clearingHeld
    const placed = await orderIn(ctx, 'completed')
    expect((await stats()).clearingHeld).toBeCloseTo(before + 90, 2)

    const [record] = await recordsOf(ctx, placed.orderId)
    await ctx.database.db.update(clearances).set({ reversedCents: 100 }).where(eq(clearances.id, record!.id))
    const check = await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: root.accessToken })
    expect(check.json().data).toMatchObject({ ok: false, problems: [{ kind: 'clearing_mismatch', id: expect.any(String), message: 'clearing balance 9000 cents, earnings still clearing hold 8900 cents' }] })
    await ctx.database.db.update(clearances).set({ reversedCents: 0 }).where(eq(clearances.id, record!.id))
  })

  it('refuses an unknown statement account with 400 on account', async () => {
    const user = await createFundedBuyer(ctx, 0)
    expectError(await request(ctx.app, { method: 'GET', url: '/wallet/transactions?account=escrow', token: user.accessToken }), 400, 'VALIDATION_ERROR', ['account'])
  })

  // PostgreSQL only: a second connection holds an earning's row as another worker would.
  it.runIf(inject('pgTemplate') !== '')('skips an earning another worker holds, and clears it once that worker lets go', async () => {
    const placed = await orderIn(ctx, 'completed')
    ctx.clock.advance(7 * DAY)
    const [record] = await recordsOf(ctx, placed.orderId)
    let release: () => void = () => undefined
    let locked: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    const held = new Promise<void>((resolve) => (locked = resolve))
    const holding = ctx.database.db.transaction(async (tx) => {
      await tx.select().from(clearances).where(eq(clearances.id, record!.id)).for('update')
      locked()
      await released
    })
    await held
    await ctx.app.container.wallet.clearDueEarnings()
    expect((await recordsOf(ctx, placed.orderId))[0]!.settledAt).toBeNull()
    release()
    await holding
    await ctx.app.container.wallet.clearDueEarnings()
    expect(await clearancesOf(ctx, placed.orderId)).toBe(1)
    await renewSessions(ctx, placed.seller)
    expect(await wallet(ctx, placed.seller)).toMatchObject({ balance: 90, clearing: 0 })
  })
})

/** CLEARANCE_DAYS=0: earnings are available at once, as before clearance existed. */
describe('clearance turned off (CLEARANCE_DAYS=0)', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '0' } })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  it('pays earnings and tips straight to available, records nothing to clear, and shows nothing clearing', async () => {
    const placed = await orderIn(ctx, 'completed')
    expect((await tip(ctx, placed, 5)).statusCode).toBe(200)
    expect(await wallet(ctx, placed.seller)).toEqual({ balance: 95, escrow: 0, pendingPayouts: 0, clearing: 0, nextClearingAt: null, currency: 'USD' })
    expect((await statement(ctx, placed.seller)).map((line) => [line.type, line.account, line.amount, line.availableAt])).toEqual([
      ['tip_earning', 'available', 5, null],
      ['order_earning', 'available', 90, null],
    ])
    expect(await recordsOf(ctx, placed.orderId)).toEqual([])
    expect(await ctx.app.container.wallet.clearDueEarnings()).toBe(0)
  })
})
