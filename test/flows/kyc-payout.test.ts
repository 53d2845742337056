import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { documentsForm, kycStep1, kycStep2 } from '../factories/kyc.ts'
import { createUser, DEFAULT_PASSWORD, type TestUser } from '../factories/users.ts'
import { expectBooksBalance } from '../setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../setup/test-app.ts'

/**
 * A seller's road to their first payout, through the real KYC flow: register, activate, verify
 * identity in two steps, staff approval, deposit, payout, staff processing.
 */
describe('flow: identity verification unlocks payouts', () => {
  let ctx: TestContext
  let reviewer: TestUser
  let cashier: TestUser

  beforeAll(async () => {
    ctx = await createTestApp()
    reviewer = await createUser(ctx, { permissions: ['view_kyc', 'manage_kyc'] })
    cashier = await createUser(ctx, { permissions: ['view_accounts', 'approve_withdrawals'] })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  /** Registers through the API, activates with the e-mailed link and logs in. */
  async function registerSeller(name: string): Promise<{ token: string; email: string }> {
    const email = `${name}-${Date.now().toString(36)}@example.test`
    expect((await request(ctx.app, { method: 'POST', url: '/auth/register', payload: { email, password: DEFAULT_PASSWORD, fullName: 'Ada Seller' } })).statusCode).toBe(201)
    await ctx.app.container.worker.drain()
    expect((await request(ctx.app, { method: 'POST', url: '/auth/activate', payload: { token: ctx.mailer.tokenTo(email) } })).statusCode).toBe(200)
    const login = await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email, password: DEFAULT_PASSWORD } })
    expect(login.statusCode).toBe(200)
    return { token: login.json().data.accessToken, email }
  }

  const deposit = (token: string, amount: number) => request(ctx.app, { method: 'POST', url: '/wallet/deposits', token, payload: { amount } })
  const askPayout = (token: string, amount: number) => request(ctx.app, { method: 'POST', url: '/wallet/payout', token, payload: { amount, method: 'paypal', details: { email: 'seller@example.test' } } })

  it('register -> KYC step 1 -> step 2 -> staff approve -> deposit -> payout succeeds and is processed', async () => {
    const seller = await registerSeller('verified')
    expect((await request(ctx.app, { method: 'GET', url: '/seller/kyc/status', token: seller.token })).json().data.due).toEqual(['personal_details', 'documents'])

    expect((await kycStep1(ctx.app, seller.token)).statusCode).toBe(200)
    expectError(await askPayout(seller.token, 10), 422, 'KYC_REQUIRED')
    const submitted = await kycStep2(ctx.app, seller.token, await documentsForm('id_card'))
    expect(submitted.statusCode).toBe(200)
    const submissionId = submitted.json().data.submissionId as string
    expectError(await askPayout(seller.token, 10), 422, 'KYC_REQUIRED')

    expect((await request(ctx.app, { method: 'POST', url: `/admin/kyc/${submissionId}/approve`, token: reviewer.accessToken })).statusCode).toBe(200)
    await ctx.app.container.worker.drain()
    expect(ctx.mailer.sent.some((mail) => mail.to === seller.email && mail.subject === 'Your identity is verified')).toBe(true)

    expect((await deposit(seller.token, 150)).statusCode).toBe(201)
    const payout = await askPayout(seller.token, 100)
    expect(payout.statusCode, payout.body).toBe(201)
    expect(payout.json().data).toMatchObject({ amount: 100, status: 'pending' })
    expect((await request(ctx.app, { method: 'GET', url: '/wallet', token: seller.token })).json().data).toMatchObject({ balance: 50, pendingPayouts: 100 })

    const processed = await request(ctx.app, { method: 'POST', url: `/admin/payouts/${payout.json().data.id}/approve`, token: cashier.accessToken })
    expect(processed.json().data.status).toBe('processed')
    expect((await request(ctx.app, { method: 'GET', url: '/wallet', token: seller.token })).json().data).toMatchObject({ balance: 50, pendingPayouts: 0 })
  })

  it('a rejected KYC still gets 422 KYC_REQUIRED, and nothing moves', async () => {
    const seller = await registerSeller('rejected')
    expect((await kycStep1(ctx.app, seller.token)).statusCode).toBe(200)
    const submissionId = (await kycStep2(ctx.app, seller.token, await documentsForm('id_card'))).json().data.submissionId as string
    const rejected = await request(ctx.app, { method: 'POST', url: `/admin/kyc/${submissionId}/reject`, token: reviewer.accessToken, payload: { reason: 'The document has expired' } })
    expect(rejected.statusCode).toBe(200)

    expect((await deposit(seller.token, 150)).statusCode).toBe(201)
    expectError(await askPayout(seller.token, 100), 422, 'KYC_REQUIRED')
    expect((await request(ctx.app, { method: 'GET', url: '/wallet', token: seller.token })).json().data).toMatchObject({ balance: 150, pendingPayouts: 0 })
    expect((await request(ctx.app, { method: 'GET', url: '/wallet/payouts', token: seller.token })).json().data.items).toEqual([])
    expect((await request(ctx.app, { method: 'GET', url: '/seller/kyc/status', token: seller.token })).json().data).toMatchObject({ status: 'rejected', rejectionReason: 'The document has expired' })
  })
})
