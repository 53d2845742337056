import { eq, sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { orderIn } from '../../../test/factories/orders.ts'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { deposits } from './deposits.table.ts'
import { ledgerAccounts, ledgerEntries, ledgerTransactions } from './ledger.table.ts'

describe('wallet routes', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const deposit = (token: string, payload: unknown) => request(ctx.app, { method: 'POST', url: '/wallet/deposits', token, payload: payload as object })
  const wallet = async (token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data
  const countRows = async (userId: string) => ({
    deposits: (await ctx.database.db.select().from(deposits).where(eq(deposits.userId, userId))).length,
    transactions: (await ctx.database.db.select().from(ledgerTransactions)).length,
  })

  describe('GET /wallet', () => {
    it('answers 401 without a token', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/wallet' }), 401, 'UNAUTHENTICATED')
    })

    it('answers zeros in the platform currency for a user who never moved money', async () => {
      const { accessToken } = await createUser(ctx)
      const response = await request(ctx.app, { method: 'GET', url: '/wallet', token: accessToken })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { balance: 0, escrow: 0, pendingPayouts: 0, clearing: 0, nextClearingAt: null, currency: 'USD' } })
    })
  })

  describe('POST /wallet/deposits', () => {
    it('answers 401 without a token and stores nothing', async () => {
      expectError(await request(ctx.app, { method: 'POST', url: '/wallet/deposits', payload: { amount: 10 } }), 401, 'UNAUTHENTICATED')
    })

    const badAmounts: [string, unknown][] = [
      ['0', { amount: 0 }],
      ['a negative amount', { amount: -5 }],
      ['1e308', { amount: 1e308 }],
      ['0.001', { amount: 0.001 }],
      ['0.49 (below the minimum)', { amount: 0.49 }],
      ['10000.01 (above the maximum)', { amount: 10000.01 }],
      ['5.555 (three decimals)', { amount: 5.555 }],
      ['the string "10"', { amount: '10' }],
      ['null', { amount: null }],
      ['a missing amount', {}],
    ]
    for (const [name, payload] of badAmounts) {
      it(`refuses ${name} with 400 on amount and moves nothing`, async () => {
        const { user, accessToken } = await createUser(ctx)
        const before = await countRows(user.id)
        expectError(await deposit(accessToken, payload), 400, 'VALIDATION_ERROR', ['amount'])
        expect(await countRows(user.id)).toEqual(before)
        expect(await wallet(accessToken)).toMatchObject({ balance: 0 })
      })
    }

    it('credits a sandbox deposit at once: 201, the balance, the statement and the ledger', async () => {
      const { user, accessToken } = await createUser(ctx)
      const response = await deposit(accessToken, { amount: 25.5 })
      expect(response.statusCode, response.body).toBe(201)
      const { data } = response.json()
      expect(data).toEqual({
        id: expect.any(String),
        amount: 25.5,
        currency: 'USD',
        status: 'succeeded',
        failureReason: null,
        createdAt: ctx.clock.now().toISOString(),
        completedAt: ctx.clock.now().toISOString(),
      })
      expect(await wallet(accessToken)).toEqual({ balance: 25.5, escrow: 0, pendingPayouts: 0, clearing: 0, nextClearingAt: null, currency: 'USD' })
      const [row] = await ctx.database.db.select().from(deposits).where(eq(deposits.id, data.id))
      expect(row).toMatchObject({ userId: user.id, amountCents: 2550, status: 'succeeded', provider: 'sandbox', providerReference: `sandbox_${data.id}` })
      const entries = await ctx.database.db
        .select({ amount: ledgerEntries.amountCents, kind: ledgerAccounts.kind, ownerId: ledgerAccounts.ownerId })
        .from(ledgerEntries)
        .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
        .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerEntries.transactionId))
        .where(eq(ledgerTransactions.depositId, data.id))
      expect(entries.sort((a, b) => a.amount - b.amount)).toEqual([
        { amount: -2550, kind: 'external', ownerId: null },
        { amount: 2550, kind: 'available', ownerId: user.id },
      ])
    })
  })

  describe('GET /wallet/transactions', () => {
    it('answers 401 without a token', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/wallet/transactions' }), 401, 'UNAUTHENTICATED')
    })

    it("lists the caller's movements newest first with running balances, paged, and nobody else's", async () => {
      const { accessToken } = await createUser(ctx)
      const other = await createUser(ctx)
      await deposit(other.accessToken, { amount: 99 })
      for (const amount of [10, 20.25, 5]) {
        expect((await deposit(accessToken, { amount })).statusCode).toBe(201)
        ctx.clock.advance(1000)
      }
      const page = await request(ctx.app, { method: 'GET', url: '/wallet/transactions?limit=2', token: accessToken })
      expect(page.statusCode).toBe(200)
      const { items, pagination } = page.json().data
      expect(pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, hasNext: true, hasPrev: false })
      expect(items).toEqual([
        { id: expect.any(String), type: 'deposit', account: 'available', amount: 5, balanceAfter: 35.25, description: 'Deposit via sandbox', orderId: null, payoutId: null, availableAt: null, createdAt: expect.any(String) },
        { id: expect.any(String), type: 'deposit', account: 'available', amount: 20.25, balanceAfter: 30.25, description: 'Deposit via sandbox', orderId: null, payoutId: null, availableAt: null, createdAt: expect.any(String) },
      ])
      const rest = (await request(ctx.app, { method: 'GET', url: '/wallet/transactions?limit=2&page=2', token: accessToken })).json().data.items
      expect(rest.map((item: { amount: number }) => item.amount)).toEqual([10])
    })

    it('defaults to 20 per page and refuses a limit over 100 (400 on limit)', async () => {
      const { accessToken } = await createUser(ctx)
      expect((await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: accessToken })).json().data.pagination.limit).toBe(20)
      expectError(await request(ctx.app, { method: 'GET', url: '/wallet/transactions?limit=101', token: accessToken }), 400, 'VALIDATION_ERROR', ['limit'])
    })
  })

  describe('GET /admin/ledger/check', () => {
    let admin: TestUser
    beforeAll(async () => {
      admin = await createSuperuser(ctx)
    })

    it('answers 401 without a token and 403 for staff who are not superusers', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/ledger/check' }), 401, 'UNAUTHENTICATED')
      const staff = await createUser(ctx, { permissions: ['view_accounts', 'approve_withdrawals'] })
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: staff.accessToken }), 403, 'FORBIDDEN')
    })

    it('reports balanced books, then a balance that no longer matches its entries', async () => {
      const { user, accessToken } = await createUser(ctx)
      await deposit(accessToken, { amount: 12 })
      const clean = await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: admin.accessToken })
      expect(clean.statusCode).toBe(200)
      expect(clean.json().data).toMatchObject({ ok: true, problems: [] })
      expect(clean.json().data.transactions).toBeGreaterThan(0)
      expect(clean.json().data.accounts).toBeGreaterThanOrEqual(5)

      const account = eq(ledgerAccounts.ownerId, user.id)
      await ctx.database.db.update(ledgerAccounts).set({ balanceCents: sql`${ledgerAccounts.balanceCents} + 1` }).where(sql`${account} and ${ledgerAccounts.kind} = 'available'`)
      try {
        const broken = (await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: admin.accessToken })).json().data
        expect(broken.ok).toBe(false)
        expect(broken.problems).toEqual([{ kind: 'balance_mismatch', id: expect.any(String), message: 'balance 1201 cents, entries sum to 1200 cents' }])
      } finally {
        await ctx.database.db.update(ledgerAccounts).set({ balanceCents: sql`${ledgerAccounts.balanceCents} - 1` }).where(sql`${account} and ${ledgerAccounts.kind} = 'available'`)
      }
    })
  })

  it('refuses to update or delete a ledger entry (append-only)', async () => {
    const { accessToken } = await createUser(ctx)
    await deposit(accessToken, { amount: 7 })
    const [entry] = await ctx.database.db.select().from(ledgerEntries).limit(1)
    await expect(ctx.database.db.update(ledgerEntries).set({ amountCents: 1 }).where(eq(ledgerEntries.id, entry!.id))).rejects.toThrow()
    await expect(ctx.database.db.delete(ledgerEntries).where(eq(ledgerEntries.id, entry!.id))).rejects.toThrow()
    expect((await ctx.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.id, entry!.id)))[0]).toEqual(entry)
  })
})

describe('deposits without a payments provider', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { PAYMENTS_SANDBOX_ENABLED: 'false' } })
  })
  afterAll(() => ctx.close())

  it('answers 503 DEPOSITS_UNAVAILABLE and records nothing', async () => {
    const { user, accessToken } = await createUser(ctx)
    expectError(await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: accessToken, payload: { amount: 10 } }), 503, 'DEPOSITS_UNAVAILABLE')
    expect(await ctx.database.db.select().from(deposits).where(eq(deposits.userId, user.id))).toEqual([])
  })
})

describe('staff views and corrections of a wallet', () => {
  let ctx: TestContext
  let admin: TestUser
  let accountant: TestUser
  beforeAll(async () => {
    // Earnings clear for a week here, so a seller's wallet and statement show clearing lines.
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '7' } })
    admin = await createSuperuser(ctx)
    accountant = await createUser(ctx, { permissions: ['view_accounts'] })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const adjust = (token: string | undefined, userId: string, payload: unknown) =>
    request(ctx.app, { method: 'POST', url: `/admin/wallets/${userId}/adjustments`, token, payload: payload as object })

  it('shows a user’s wallet to view_accounts; 401, 403 and 404 for the wrong caller or user', async () => {
    const { user, accessToken } = await createUser(ctx)
    await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: accessToken, payload: { amount: 15 } })
    const shown = await request(ctx.app, { method: 'GET', url: `/admin/wallets/${user.id}`, token: accountant.accessToken })
    expect(shown.statusCode).toBe(200)
    expect(shown.json().data).toEqual({ userId: user.id, balance: 15, escrow: 0, pendingPayouts: 0, clearing: 0, nextClearingAt: null, currency: 'USD' })
    expectError(await request(ctx.app, { method: 'GET', url: `/admin/wallets/${user.id}` }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'GET', url: `/admin/wallets/${user.id}`, token: accessToken }), 403, 'FORBIDDEN')
    expectError(await request(ctx.app, { method: 'GET', url: '/admin/wallets/0190a000-0000-7000-8000-00000000beef', token: accountant.accessToken }), 404, 'NOT_FOUND')
  })

  it('shows a seller’s clearing earning and when it becomes available in the staff wallet answer', async () => {
    const { seller } = await orderIn(ctx, 'completed')
    const shown = await request(ctx.app, { method: 'GET', url: `/admin/wallets/${seller.user.id}`, token: accountant.accessToken })
    expect(shown.statusCode).toBe(200)
    expect(shown.json().data).toEqual({
      userId: seller.user.id,
      balance: 0,
      escrow: 0,
      pendingPayouts: 0,
      clearing: 90,
      nextClearingAt: new Date(ctx.clock.now().getTime() + 7 * DAY).toISOString(),
      currency: 'USD',
    })
  })

  describe('GET /admin/wallets/{userId}/transactions', () => {
    const statement = (token: string | undefined, userId: string, query = '') => request(ctx.app, { method: 'GET', url: `/admin/wallets/${userId}/transactions${query}`, token })

    it('answers view_accounts the lines the user sees, clearing earnings with availableAt', async () => {
      const placed = await orderIn(ctx, 'completed')
      for (const party of [placed.seller, placed.buyer]) {
        const staff = await statement(accountant.accessToken, party.user.id)
        expect(staff.statusCode, staff.body).toBe(200)
        const own = await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: party.accessToken })
        expect(staff.json()).toEqual(own.json())
      }
      const { items, pagination } = (await statement(accountant.accessToken, placed.seller.user.id)).json().data
      expect(pagination).toEqual({ page: 1, limit: 20, total: 1, pages: 1, hasNext: false, hasPrev: false })
      expect(items).toEqual([
        {
          id: expect.any(String),
          type: 'order_earning',
          account: 'clearing',
          amount: 90,
          balanceAfter: 90,
          description: expect.any(String),
          orderId: placed.orderId,
          payoutId: null,
          availableAt: new Date(ctx.clock.now().getTime() + 7 * DAY).toISOString(),
          createdAt: ctx.clock.now().toISOString(),
        },
      ])
    })

    it('pages newest first and keeps one account with `account`', async () => {
      const placed = await orderIn(ctx, 'completed')
      const { buyer, seller } = placed
      const first = (await statement(accountant.accessToken, buyer.user.id, '?limit=1')).json().data
      expect(first.pagination).toEqual({ page: 1, limit: 1, total: 2, pages: 2, hasNext: true, hasPrev: false })
      expect(first.items.map((line: { type: string; amount: number }) => [line.type, line.amount])).toEqual([['order_payment', -100]])
      const second = (await statement(accountant.accessToken, buyer.user.id, '?limit=1&page=2')).json().data
      expect(second.pagination).toMatchObject({ page: 2, hasNext: false, hasPrev: true })
      expect(second.items.map((line: { type: string; amount: number }) => [line.type, line.amount])).toEqual([['deposit', 500]])

      const clearing = (await statement(accountant.accessToken, seller.user.id, '?account=clearing')).json().data.items
      expect(clearing.map((line: { account: string; type: string }) => [line.account, line.type])).toEqual([['clearing', 'order_earning']])
      expect((await statement(accountant.accessToken, seller.user.id, '?account=available')).json().data).toMatchObject({ items: [], pagination: { total: 0 } })
    })

    it('answers 401 without a token, 403 without view_accounts, 404 for an unknown or malformed user id', async () => {
      const { user, accessToken } = await createUser(ctx)
      const support = await createUser(ctx, { permissions: ['view_users', 'view_orders'] })
      expectError(await statement(undefined, user.id), 401, 'UNAUTHENTICATED')
      expectError(await statement(accessToken, user.id), 403, 'FORBIDDEN')
      expectError(await statement(support.accessToken, user.id), 403, 'FORBIDDEN')
      expectError(await statement(accountant.accessToken, '0190a000-0000-7000-8000-00000000beef'), 404, 'NOT_FOUND')
      expectError(await statement(accountant.accessToken, 'not-an-id'), 404, 'NOT_FOUND')
      expect((await statement(admin.accessToken, user.id)).statusCode).toBe(200)
    })

    const badQueries: [string, string, string][] = [
      ['a limit over 100', '?limit=101', 'limit'],
      ['a limit of 0', '?limit=0', 'limit'],
      ['page 0', '?page=0', 'page'],
      ['a page that is not a number', '?page=two', 'page'],
      ['an account that is not on a statement', '?account=escrow', 'account'],
      ['an unknown parameter', '?type=deposit', 'type'],
    ]
    for (const [name, query, field] of badQueries) {
      it(`refuses ${name} with 400 on ${field}`, async () => {
        const { user } = await createUser(ctx)
        expectError(await statement(accountant.accessToken, user.id, query), 400, 'VALIDATION_ERROR', [field])
      })
    }
  })

  it('lets a superuser credit and debit with a reason, as `adjustment` lines, never below zero', async () => {
    const { user, accessToken } = await createUser(ctx)
    const credited = await adjust(admin.accessToken, user.id, { amount: 12.5, reason: 'Goodwill credit' })
    expect(credited.statusCode, credited.body).toBe(201)
    expect(credited.json().data).toMatchObject({ userId: user.id, balance: 12.5 })
    expect((await adjust(admin.accessToken, user.id, { amount: -2.5, reason: 'Fee correction' })).json().data.balance).toBe(10)
    expectError(await adjust(admin.accessToken, user.id, { amount: -10.01, reason: 'Too much' }), 422, 'INSUFFICIENT_FUNDS')
    const lines = (await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: accessToken })).json().data.items
    expect(lines.map((line: { type: string; amount: number; description: string }) => [line.type, line.amount, line.description])).toEqual([
      ['adjustment', -2.5, 'Adjustment by staff: Fee correction'],
      ['adjustment', 12.5, 'Adjustment by staff: Goodwill credit'],
    ])
  })

  it('refuses adjustments from anyone but a superuser, for unknown users, and with bad input', async () => {
    const { user } = await createUser(ctx)
    expectError(await adjust(undefined, user.id, { amount: 5, reason: 'x' }), 401, 'UNAUTHENTICATED')
    expectError(await adjust(accountant.accessToken, user.id, { amount: 5, reason: 'x' }), 403, 'FORBIDDEN')
    expectError(await adjust(admin.accessToken, '0190a000-0000-7000-8000-00000000beef', { amount: 5, reason: 'x' }), 404, 'NOT_FOUND')
    expectError(await adjust(admin.accessToken, user.id, { amount: 0, reason: 'x' }), 400, 'VALIDATION_ERROR', ['amount'])
    expectError(await adjust(admin.accessToken, user.id, { amount: 1.001, reason: 'x' }), 400, 'VALIDATION_ERROR', ['amount'])
    expectError(await adjust(admin.accessToken, user.id, { amount: 5 }), 400, 'VALIDATION_ERROR', ['reason'])
    expectError(await adjust(admin.accessToken, user.id, { amount: '5', reason: 'x' }), 400, 'VALIDATION_ERROR', ['amount'])
  })
})
