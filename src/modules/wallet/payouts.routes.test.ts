import { and, eq, sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { users } from '../users/users.table.ts'
import { payouts } from './payouts.table.ts'

const BANK = { accountNumber: 'DE89 3704 0044 0532 0130 00', bankName: 'Commerzbank' }

describe('payouts', () => {
  let ctx: TestContext
  let approver: TestUser
  let viewer: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    approver = await createUser(ctx, { permissions: ['view_accounts', 'approve_withdrawals'] })
    viewer = await createUser(ctx, { permissions: ['view_accounts'] })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  /** A seller who passed KYC (set directly here; test/flows/kyc-payout.test.ts goes through the real KYC flow) with `funds` in the wallet. */
  async function seller(funds = 200, verified = true): Promise<TestUser> {
    const account = await createUser(ctx)
    if (verified) await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, account.user.id))
    if (funds > 0) expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: account.accessToken, payload: { amount: funds } })).statusCode).toBe(201)
    return account
  }
  const ask = (token: string, payload: unknown) => request(ctx.app, { method: 'POST', url: '/wallet/payout', token, payload: payload as object })
  const wallet = async (token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data
  const payoutRows = (userId: string) => ctx.database.db.select().from(payouts).where(eq(payouts.userId, userId))
  const eventsFor = (payoutId: string, name: string) =>
    ctx.database.db.select().from(outboxJobs).where(and(eq(outboxJobs.topic, 'event'), sql`${outboxJobs.payload}->>'event' = ${name}`, sql`${outboxJobs.payload}->'data'->>'payoutId' = ${payoutId}`))

  describe('POST /wallet/payout', () => {
    it('answers 401 without a token', async () => {
      expectError(await request(ctx.app, { method: 'POST', url: '/wallet/payout', payload: { amount: 10, method: 'paypal', details: { email: 'a@b.co' } } }), 401, 'UNAUTHENTICATED')
    })

    it('moves the amount from the balance to pending payouts and answers the payout with its full account number', async () => {
      const owner = await seller(200)
      const response = await ask(owner.accessToken, { amount: 50, method: 'bank_transfer', details: BANK })
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json().data).toEqual({
        id: expect.any(String),
        userId: owner.user.id,
        amount: 50,
        currency: 'USD',
        method: 'bank_transfer',
        details: BANK,
        status: 'pending',
        rejectionReason: null,
        createdAt: expect.any(String),
        decidedAt: null,
      })
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 150, pendingPayouts: 50 })
      const statement = (await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: owner.accessToken })).json().data.items
      expect(statement[0]).toMatchObject({ type: 'payout', amount: -50, balanceAfter: 150, payoutId: response.json().data.id })
    })

    it('refuses a user without a verified identity with 422 KYC_REQUIRED, moving nothing', async () => {
      const owner = await seller(100, false)
      expectError(await ask(owner.accessToken, { amount: 20, method: 'paypal', details: { email: 'me@example.test' } }), 422, 'KYC_REQUIRED')
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 100, pendingPayouts: 0 })
      expect(await payoutRows(owner.user.id)).toEqual([])
    })

    it('refuses more than the balance with 422 INSUFFICIENT_FUNDS, moving nothing', async () => {
      const owner = await seller(30)
      expectError(await ask(owner.accessToken, { amount: 30.01, method: 'paypal', details: { email: 'me@example.test' } }), 422, 'INSUFFICIENT_FUNDS')
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 30, pendingPayouts: 0 })
      expect(await payoutRows(owner.user.id)).toEqual([])
    })

    const refusals: [string, unknown, string[]][] = [
      ['an amount below the minimum (9.99)', { amount: 9.99, method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['0', { amount: 0, method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['a negative amount', { amount: -10, method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['1e308', { amount: 1e308, method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['0.001', { amount: 0.001, method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['three decimals', { amount: 10.005, method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['the string "10"', { amount: '10', method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['a null amount', { amount: null, method: 'paypal', details: { email: 'me@example.test' } }, ['amount']],
      ['an unknown method', { amount: 10, method: 'cheque', details: {} }, ['method']],
      ['missing details', { amount: 10, method: 'bank_transfer' }, ['details']],
      ['bank details without a bank', { amount: 10, method: 'bank_transfer', details: { accountNumber: '12345678' } }, ['details.bankName']],
      ['paypal without an e-mail', { amount: 10, method: 'paypal', details: {} }, ['details.email']],
      ['a paypal e-mail on a bank transfer', { amount: 10, method: 'bank_transfer', details: { ...BANK, email: 'me@example.test' } }, ['details.email']],
      ['a malformed account number', { amount: 10, method: 'bank_transfer', details: { ...BANK, accountNumber: '12;drop' } }, ['details.accountNumber']],
    ]
    for (const [name, payload, fields] of refusals) {
      it(`refuses ${name} with 400 naming ${fields.join(', ')}, moving nothing`, async () => {
        const owner = await seller(100)
        const refused = await ask(owner.accessToken, payload)
        expectError(refused, 400, 'VALIDATION_ERROR', fields)
        expect(await wallet(owner.accessToken)).toMatchObject({ balance: 100, pendingPayouts: 0 })
        expect(await payoutRows(owner.user.id)).toEqual([])
      })
    }

    it('names the minimum in the message', async () => {
      const owner = await seller(100)
      const refused = await ask(owner.accessToken, { amount: 9.99, method: 'paypal', details: { email: 'me@example.test' } })
      expect(refused.json().error.details).toEqual([{ field: 'amount', message: 'must be at least 10.00 (the minimum payout)' }])
    })

    it('never overdraws under 60 concurrent payouts of 10.00 against 200.00: 20 succeed, 40 are 422, none is 5xx', async () => {
      const owner = await seller(200)
      const answers = await Promise.all(Array.from({ length: 60 }, () => ask(owner.accessToken, { amount: 10, method: 'paypal', details: { email: 'me@example.test' } })))
      const statuses = answers.map((answer) => answer.statusCode)
      expect(statuses.filter((status) => status === 201)).toHaveLength(20)
      expect(statuses.filter((status) => status === 422)).toHaveLength(40)
      for (const answer of answers.filter((candidate) => candidate.statusCode === 422)) expect(answer.json().error.code).toBe('INSUFFICIENT_FUNDS')
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 0, pendingPayouts: 200 })
      expect(await payoutRows(owner.user.id)).toHaveLength(20)
    })
  })

  describe('Idempotency-Key', () => {
    it('makes 50 concurrent payout requests with one key a single payout: every answer is its replay or 409', async () => {
      const owner = await seller(200)
      const payload = { amount: 10, method: 'paypal', details: { email: 'me@example.test' } }
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => request(ctx.app, { method: 'POST', url: '/wallet/payout', token: owner.accessToken, headers: { 'idempotency-key': 'payout-once' }, payload })),
      )
      expect(await payoutRows(owner.user.id)).toHaveLength(1)
      const created = answers.filter((answer) => answer.statusCode === 201)
      expect(created.length).toBeGreaterThanOrEqual(1)
      for (const answer of created) expect(answer.body).toBe(created[0]!.body)
      for (const answer of answers.filter((candidate) => candidate.statusCode !== 201)) expectError(answer, 409, 'IDEMPOTENCY_KEY_IN_USE')
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 190, pendingPayouts: 10 })
    })

    it('replays a deposit retried with the same key byte for byte, and refuses the key with another amount (422)', async () => {
      const owner = await seller(0)
      const send = (amount: number) => request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: owner.accessToken, headers: { 'idempotency-key': 'deposit-1' }, payload: { amount } })
      const first = await send(30)
      const again = await send(30)
      expect(first.statusCode).toBe(201)
      expect(again.statusCode).toBe(201)
      expect(again.body).toBe(first.body)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expectError(await send(31), 422, 'IDEMPOTENCY_KEY_REUSED')
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 30 })
    })
  })

  describe('listing and cancelling', () => {
    it("lists the caller's payouts newest first, and nobody else's", async () => {
      const owner = await seller(100)
      const other = await seller(100)
      await ask(other.accessToken, { amount: 10, method: 'paypal', details: { email: 'o@example.test' } })
      const first = (await ask(owner.accessToken, { amount: 10, method: 'paypal', details: { email: 'me@example.test' } })).json().data.id
      ctx.clock.advance(1000)
      const second = (await ask(owner.accessToken, { amount: 20, method: 'paypal', details: { email: 'me@example.test' } })).json().data.id
      const listed = await request(ctx.app, { method: 'GET', url: '/wallet/payouts', token: owner.accessToken })
      expect(listed.statusCode).toBe(200)
      expect(listed.json().data.items.map((item: { id: string }) => item.id)).toEqual([second, first])
      expectError(await request(ctx.app, { method: 'GET', url: '/wallet/payouts' }), 401, 'UNAUTHENTICATED')
    })

    it('returns the money when the owner cancels; a second cancel is 422 INVALID_TRANSITION; another user gets 404', async () => {
      const owner = await seller(100)
      const stranger = await seller(0)
      const id = (await ask(owner.accessToken, { amount: 40, method: 'paypal', details: { email: 'me@example.test' } })).json().data.id
      expectError(await request(ctx.app, { method: 'POST', url: `/wallet/payouts/${id}/cancel`, token: stranger.accessToken }), 404, 'NOT_FOUND')
      const cancelled = await request(ctx.app, { method: 'POST', url: `/wallet/payouts/${id}/cancel`, token: owner.accessToken })
      expect(cancelled.statusCode).toBe(200)
      expect(cancelled.json().data).toMatchObject({ id, status: 'cancelled', decidedAt: expect.any(String) })
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 100, pendingPayouts: 0 })
      expectError(await request(ctx.app, { method: 'POST', url: `/wallet/payouts/${id}/cancel`, token: owner.accessToken }), 422, 'INVALID_TRANSITION')
      expectError(await request(ctx.app, { method: 'POST', url: '/wallet/payouts/0190a000-0000-7000-8000-00000000beef/cancel', token: owner.accessToken }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'POST', url: '/wallet/payouts/not-an-id/cancel', token: owner.accessToken }), 404, 'NOT_FOUND')
    })
  })

  describe('staff decisions', () => {
    it('lists payouts for view_accounts with masked account numbers, filtered by status; 403 without the permission; 400 on a bad status', async () => {
      const owner = await seller(100)
      const id = (await ask(owner.accessToken, { amount: 25, method: 'bank_transfer', details: BANK })).json().data.id
      const listed = await request(ctx.app, { method: 'GET', url: '/admin/payouts?status=pending&limit=100', token: viewer.accessToken })
      expect(listed.statusCode).toBe(200)
      const item = listed.json().data.items.find((candidate: { id: string }) => candidate.id === id)
      expect(item.details).toEqual({ accountNumber: '****3000', bankName: 'Commerzbank' })
      expect(item.user).toEqual({ id: owner.user.id, fullName: owner.user.fullName, username: owner.user.username, avatar: null })
      expect(listed.json().data.items.every((candidate: { status: string }) => candidate.status === 'pending')).toBe(true)
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/payouts', token: owner.accessToken }), 403, 'FORBIDDEN')
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/payouts' }), 401, 'UNAUTHENTICATED')
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/payouts?status=zombie', token: viewer.accessToken }), 400, 'VALIDATION_ERROR', ['status'])
    })

    it('processes a payout with approve_withdrawals: the money leaves, payout.processed is written; approving again is 422', async () => {
      const owner = await seller(100)
      const id = (await ask(owner.accessToken, { amount: 30, method: 'bank_transfer', details: BANK })).json().data.id
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/approve`, token: viewer.accessToken }), 403, 'FORBIDDEN')
      const approved = await request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/approve`, token: approver.accessToken })
      expect(approved.statusCode).toBe(200)
      expect(approved.json().data).toMatchObject({ id, status: 'processed', details: { accountNumber: '****3000' } })
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 70, pendingPayouts: 0 })
      expect(await eventsFor(id, 'payout.processed')).toHaveLength(1)
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/approve`, token: approver.accessToken }), 422, 'INVALID_TRANSITION')
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/reject`, token: approver.accessToken, payload: { reason: 'late' } }), 422, 'INVALID_TRANSITION')
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/payouts/0190a000-0000-7000-8000-00000000beef/approve', token: approver.accessToken }), 404, 'NOT_FOUND')
    })

    it('rejects with a reason and returns the money (payout.rejected); without a reason it is 400', async () => {
      const owner = await seller(100)
      const id = (await ask(owner.accessToken, { amount: 30, method: 'paypal', details: { email: 'me@example.test' } })).json().data.id
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/reject`, token: approver.accessToken, payload: {} }), 400, 'VALIDATION_ERROR', ['reason'])
      const rejected = await request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/reject`, token: approver.accessToken, payload: { reason: 'The account is closed' } })
      expect(rejected.statusCode).toBe(200)
      expect(rejected.json().data).toMatchObject({ status: 'rejected', rejectionReason: 'The account is closed' })
      expect(await wallet(owner.accessToken)).toMatchObject({ balance: 100, pendingPayouts: 0 })
      expect(await eventsFor(id, 'payout.rejected')).toHaveLength(1)
    })

    it('lets exactly one of a concurrent approval and rejection win, moving the money once', async () => {
      const owner = await seller(100)
      const id = (await ask(owner.accessToken, { amount: 60, method: 'paypal', details: { email: 'me@example.test' } })).json().data.id
      const [approve, reject] = await Promise.all([
        request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/approve`, token: approver.accessToken }),
        request(ctx.app, { method: 'POST', url: `/admin/payouts/${id}/reject`, token: approver.accessToken, payload: { reason: 'duplicate' } }),
      ])
      expect([approve.statusCode, reject.statusCode].sort()).toEqual([200, 422])
      const { status } = (await payoutRows(owner.user.id))[0]!
      expect(await wallet(owner.accessToken)).toMatchObject(status === 'processed' ? { balance: 40, pendingPayouts: 0 } : { balance: 100, pendingPayouts: 0 })
    })
  })
})

// PostgreSQL only: real concurrency over the pool (PGlite runs one transaction at a time). Its own
// database, so its 250 pending payouts do not crowd the staff queue of the tests above.
describe.runIf(inject('pgTemplate'))('payouts at scale', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  it('never overdraws under 1,000 concurrent payouts of the minimum: exactly as many succeed as the balance covers', async () => {
    const owner = await createUser(ctx)
    await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, owner.user.id))
    expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: owner.accessToken, payload: { amount: 2500 } })).statusCode).toBe(201)
    const payload = { amount: 10, method: 'paypal', details: { email: 'me@example.test' } }
    const answers = await Promise.all(Array.from({ length: 1000 }, () => request(ctx.app, { method: 'POST', url: '/wallet/payout', token: owner.accessToken, payload })))
    const statuses = answers.map((answer) => answer.statusCode)
    expect(statuses.filter((status) => status >= 500)).toEqual([])
    expect(statuses.filter((status) => status === 201)).toHaveLength(250)
    expect(statuses.filter((status) => status === 422)).toHaveLength(750)
    const balances = (await request(ctx.app, { method: 'GET', url: '/wallet', token: owner.accessToken })).json().data
    expect(balances).toMatchObject({ balance: 0, pendingPayouts: 2500 })
  }, 120_000)
})
