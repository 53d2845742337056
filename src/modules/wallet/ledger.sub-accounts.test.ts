import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { orderIn } from '../../../test/factories/orders.ts'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { users } from '../users/users.table.ts'
import { ledgerAccounts, ledgerEntries, ledgerTransactions, type PlatformAccountKind } from './ledger.table.ts'

/** Each sub-account of a platform account: its number, balance and the sum of its entries. */
async function subAccountsOf(ctx: TestContext, kind: PlatformAccountKind): Promise<{ subAccount: number; balance: number; entries: number }[]> {
  const result: unknown = await ctx.database.db.execute(sql`
    select a.sub_account as "subAccount", a.balance_cents::float8 as balance, coalesce(sum(e.amount_cents), 0)::float8 as entries
    from ledger_accounts a left join ledger_entries e on e.account_id = a.id
    where a.owner_id is null and a.kind = ${kind} group by a.id order by a.sub_account`)
  return (result as { rows: { subAccount: number; balance: number; entries: number }[] }).rows
}

/** The platform sub-accounts that the entries of these ledger transactions touched. */
async function subAccountsUsedBy(ctx: TestContext, kind: PlatformAccountKind, transactionIds: string[]): Promise<number[]> {
  const rows = await ctx.database.db
    .selectDistinct({ subAccount: ledgerAccounts.subAccount })
    .from(ledgerEntries)
    .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
    .where(and(inArray(ledgerEntries.transactionId, transactionIds), isNull(ledgerAccounts.ownerId), eq(ledgerAccounts.kind, kind)))
  return rows.map((row) => row.subAccount).sort((a, b) => a - b)
}

const transactionsOf = async (ctx: TestContext, type: 'deposit' | 'order_earning' | 'payout', since: Date) =>
  (await ctx.database.db.select({ id: ledgerTransactions.id }).from(ledgerTransactions).where(and(eq(ledgerTransactions.type, type), sql`${ledgerTransactions.createdAt} >= ${since.toISOString()}`))).map((row) => row.id)

const range = (n: number) => Array.from({ length: n }, (_, index) => index)

describe('the platform accounts spread over sub-accounts (16 by default)', () => {
  let ctx: TestContext
  let admin: TestUser
  let approver: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    admin = await createSuperuser(ctx)
    approver = await createUser(ctx, { permissions: ['view_accounts', 'approve_withdrawals'] })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const stats = async () => {
    const response = await request(ctx.app, { method: 'GET', url: '/admin/stats', token: admin.accessToken })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data as { wallet: { platformRevenue: number } }
  }
  const deposit = async (user: TestUser, amount: number) =>
    expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: user.accessToken, payload: { amount } })).statusCode).toBe(201)

  it('opens revenue and external as sub-accounts 0 to 15, each balance the sum of its entries', async () => {
    for (const kind of ['revenue', 'external'] as const) {
      const parts = await subAccountsOf(ctx, kind)
      expect(parts.map((part) => part.subAccount)).toEqual(range(16))
      for (const part of parts) expect(part.balance).toBe(part.entries)
    }
  })

  it('books 32 deposits in turn over all 16 external sub-accounts; the external total is minus what came in', async () => {
    ctx.clock.advance(1000)
    const since = ctx.clock.now()
    const before = (await subAccountsOf(ctx, 'external')).reduce((sum, part) => sum + part.balance, 0)
    const user = await createUser(ctx)
    for (let index = 0; index < 32; index++) await deposit(user, 1)
    expect(await subAccountsUsedBy(ctx, 'external', await transactionsOf(ctx, 'deposit', since))).toEqual(range(16))
    const parts = await subAccountsOf(ctx, 'external')
    expect(parts.reduce((sum, part) => sum + part.balance, 0)).toBe(before - 3200)
    for (const part of parts) expect(part.balance).toBe(part.entries)
  })

  it('books completions on revenue sub-accounts; the statistics show the fees exactly, summed over them', async () => {
    ctx.clock.advance(1000)
    const since = ctx.clock.now()
    const before = await stats()
    // Each completed Basic order (100.00) earns the platform its 10 % fee.
    for (let index = 0; index < 3; index++) await orderIn(ctx, 'completed')
    const earnings = await transactionsOf(ctx, 'order_earning', since)
    // Each completion books the seller's share and the platform's fee.
    expect(earnings).toHaveLength(6)
    expect((await subAccountsUsedBy(ctx, 'revenue', earnings)).length).toBeGreaterThan(1)
    const after = await stats()
    expect(after.wallet.platformRevenue).toBeCloseTo(before.wallet.platformRevenue + 30, 2)
    const revenue = await subAccountsOf(ctx, 'revenue')
    expect(revenue.reduce((sum, part) => sum + part.balance, 0) / 100).toBeCloseTo(after.wallet.platformRevenue, 2)
    const [fees] = await ctx.database.db
      .select({ total: sql<number>`coalesce(sum(${ledgerEntries.amountCents}), 0)::bigint`.mapWith(Number) })
      .from(ledgerEntries)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
      .where(and(isNull(ledgerAccounts.ownerId), eq(ledgerAccounts.kind, 'revenue')))
    expect(fees!.total / 100).toBeCloseTo(after.wallet.platformRevenue, 2)
  })

  it('books processed payouts back on external sub-accounts, and the reconciliation check is clean', async () => {
    ctx.clock.advance(1000)
    const since = ctx.clock.now()
    const ids: string[] = []
    for (let index = 0; index < 3; index++) {
      const seller = await createUser(ctx)
      await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, seller.user.id))
      await deposit(seller, 50)
      const asked = await request(ctx.app, { method: 'POST', url: '/wallet/payout', token: seller.accessToken, payload: { amount: 20, method: 'paypal', details: { email: 'me@example.test' } } })
      expect(asked.statusCode, asked.body).toBe(201)
      ids.push(asked.json().data.id)
    }
    for (const id of ids) expect((await request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/approve`, token: approver.accessToken })).statusCode).toBe(200)
    expect((await subAccountsUsedBy(ctx, 'external', await transactionsOf(ctx, 'payout', since))).length).toBeGreaterThan(1)
    const check = await ctx.app.container.wallet.checkLedger()
    expect(check).toMatchObject({ ok: true, problems: [] })
    const answered = await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: admin.accessToken })
    expect(answered.json().data).toMatchObject({ ok: true, problems: [] })
  })
})

describe('more sub-accounts than the migration opened', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { LEDGER_PLATFORM_SUB_ACCOUNTS: '20' } })
  })
  afterAll(() => ctx.close())

  it('opens sub-accounts 16 to 19 at zero on their first transaction', async () => {
    const user = await createUser(ctx)
    for (let index = 0; index < 20; index++) {
      expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: user.accessToken, payload: { amount: 2 } })).statusCode).toBe(201)
    }
    const parts = await subAccountsOf(ctx, 'external')
    expect(parts.map((part) => part.subAccount)).toEqual(range(20))
    for (const part of parts) expect(part.balance).toBe(part.entries)
    expect(parts.reduce((sum, part) => sum + part.balance, 0)).toBe(-4000)
    await expectBooksBalance(ctx)
  })
})

// PostgreSQL only: concurrent transactions on separate connections.
describe.runIf(inject('pgTemplate'))('100 concurrent deposits on PostgreSQL', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  it('all succeed, spread over the external sub-accounts, with the books balanced', async () => {
    ctx.clock.advance(1000)
    const since = ctx.clock.now()
    const depositors = await Promise.all(range(10).map(() => createUser(ctx)))
    const answers = await Promise.all(
      range(100).map((index) => request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: depositors[index % 10]!.accessToken, payload: { amount: 10 } })),
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(range(100).map(() => 201))
    const deposits = await transactionsOf(ctx, 'deposit', since)
    expect(deposits).toHaveLength(100)
    expect(await subAccountsUsedBy(ctx, 'external', deposits)).toEqual(range(16))
    for (const depositor of depositors) {
      expect((await request(ctx.app, { method: 'GET', url: '/wallet', token: depositor.accessToken })).json().data.balance).toBe(100)
    }
    await expectBooksBalance(ctx)
  })
})
