import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { submitKyc } from '../../../test/factories/kyc.ts'
import { createCategory, publishService } from '../../../test/factories/services.ts'
import { createSuperuser, createUser, DEFAULT_PASSWORD, unique, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { foldStatCounters } from '../../platform/statistics/statistics.ts'
import { statCounterDeltas } from '../../platform/statistics/statistics.table.ts'
import { auditLog } from '../audit/audit.table.ts'
import { users } from '../users/users.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

describe('admin console', () => {
  let ctx: TestContext
  let admin: TestUser
  let manager: TestUser
  let viewer: TestUser
  let bareStaff: TestUser
  let client: TestUser

  beforeAll(async () => {
    ctx = await createTestApp()
    admin = await createSuperuser(ctx)
    manager = await createUser(ctx, { permissions: ['view_users', 'manage_users'] })
    viewer = await createUser(ctx, { permissions: ['view_users'] })
    bareStaff = await createUser(ctx, { isStaff: true })
    client = await createUser(ctx)
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const rowOf = async (id: string) => (await ctx.database.db.select().from(users).where(eq(users.id, id)))[0]!
  const auditOf = (targetId: string) => ctx.database.db.select().from(auditLog).where(eq(auditLog.targetId, targetId))
  const suspend = (token: string | undefined, userId: string, payload: Record<string, unknown> = { reason: 'Spam in messages' }) =>
    request(ctx.app, { method: 'POST', url: `/admin/users/${userId}/suspend`, token, payload })
  const unsuspend = (token: string | undefined, userId: string) => request(ctx.app, { method: 'POST', url: `/admin/users/${userId}/unsuspend`, token })
  const me = (token: string) => request(ctx.app, { method: 'GET', url: '/users/me', token })
  const login = (email: string) => request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email, password: DEFAULT_PASSWORD } })
  const refresh = (refreshToken: string) => request(ctx.app, { method: 'POST', url: '/auth/refresh', payload: { refreshToken } })
  const listUsers = (token: string | undefined, query = '') => request(ctx.app, { method: 'GET', url: `/admin/users${query}`, token })
  const stats = async (token = bareStaff.accessToken) => {
    const response = await request(ctx.app, { method: 'GET', url: '/admin/stats', token })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data
  }

  describe('POST /admin/users/{id}/suspend', () => {
    it('suspends with a reason and locks the user out at once: access token, refresh and login answer 401', async () => {
      const user = await createUser(ctx)
      expect((await me(user.accessToken)).statusCode).toBe(200)
      const response = await suspend(manager.accessToken, user.user.id, { reason: '  Spam in messages ' })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toMatchObject({
        id: user.user.id,
        status: 'suspended',
        isActive: true,
        suspendedAt: ctx.clock.now().toISOString(),
        suspensionReason: 'Spam in messages',
        servicesCount: 0,
      })
      expect(await rowOf(user.user.id)).toMatchObject({ suspensionReason: 'Spam in messages', suspendedAt: ctx.clock.now() })

      expectError(await me(user.accessToken), 401, 'UNAUTHENTICATED')
      expectError(await refresh(user.refreshToken), 401, 'UNAUTHENTICATED')
      const refused = await login(user.user.email)
      expectError(refused, 401, 'UNAUTHENTICATED')
      expect(refused.json().error.message).toBe('This account is suspended')

      expect(await auditOf(user.user.id)).toEqual([
        expect.objectContaining({ action: 'user.suspend', actorId: manager.user.id, reason: 'Spam in messages', before: expect.objectContaining({ status: 'active' }), after: expect.objectContaining({ status: 'suspended' }), requestId: response.headers['x-request-id'] }),
      ])
    })

    it('unsuspends: the user logs in again, while tokens issued before the suspension stay refused', async () => {
      const user = await createUser(ctx)
      await suspend(manager.accessToken, user.user.id)
      const response = await unsuspend(manager.accessToken, user.user.id)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toMatchObject({ status: 'active', suspendedAt: null, suspensionReason: null })
      expectError(await me(user.accessToken), 401, 'UNAUTHENTICATED')
      const session = await login(user.user.email)
      expect(session.statusCode).toBe(200)
      expect((await me(session.json().data.accessToken)).statusCode).toBe(200)
      expect((await auditOf(user.user.id)).map((row) => row.action).sort()).toEqual(['user.suspend', 'user.unsuspend'])
    })

    it('lets only a superuser suspend staff (403 for staff with manage_users), and nobody suspend themselves (422)', async () => {
      const staff = await createUser(ctx, { permissions: ['view_orders'] })
      expectError(await suspend(manager.accessToken, staff.user.id), 403, 'FORBIDDEN')
      expectError(await suspend(manager.accessToken, admin.user.id), 403, 'FORBIDDEN')
      expect((await rowOf(staff.user.id)).suspendedAt).toBeNull()
      expectError(await suspend(manager.accessToken, manager.user.id), 422, 'CANNOT_MODIFY_SELF')
      expect((await suspend(admin.accessToken, staff.user.id)).statusCode).toBe(200)
      expectError(await unsuspend(manager.accessToken, staff.user.id), 403, 'FORBIDDEN')
      expect((await unsuspend(admin.accessToken, staff.user.id)).statusCode).toBe(200)
    })

    it('refuses an unknown user (404), a missing or blank reason (400), twice (422), and changes nothing', async () => {
      const user = await createUser(ctx)
      expectError(await suspend(manager.accessToken, UNKNOWN_ID), 404, 'NOT_FOUND')
      expectError(await suspend(manager.accessToken, 'not-an-id'), 404, 'NOT_FOUND')
      expectError(await suspend(manager.accessToken, user.user.id, {}), 400, 'VALIDATION_ERROR', ['reason'])
      expectError(await suspend(manager.accessToken, user.user.id, { reason: '   ' }), 400, 'VALIDATION_ERROR', ['reason'])
      expectError(await suspend(manager.accessToken, user.user.id, { reason: 'x'.repeat(501) }), 400, 'VALIDATION_ERROR', ['reason'])
      expect((await rowOf(user.user.id)).suspendedAt).toBeNull()
      expectError(await unsuspend(manager.accessToken, user.user.id), 422, 'NOT_SUSPENDED')
      expect((await suspend(manager.accessToken, user.user.id)).statusCode).toBe(200)
      expectError(await suspend(manager.accessToken, user.user.id), 422, 'ALREADY_SUSPENDED')
      expect(await auditOf(user.user.id)).toHaveLength(1)
      expectError(await unsuspend(manager.accessToken, UNKNOWN_ID), 404, 'NOT_FOUND')
    })

    it('answers 401 without a token and 403 without manage_users', async () => {
      const user = await createUser(ctx)
      expectError(await suspend(undefined, user.user.id), 401, 'UNAUTHENTICATED')
      expectError(await suspend(viewer.accessToken, user.user.id), 403, 'FORBIDDEN')
      expectError(await suspend(client.accessToken, user.user.id), 403, 'FORBIDDEN')
      expectError(await unsuspend(undefined, user.user.id), 401, 'UNAUTHENTICATED')
      expectError(await unsuspend(viewer.accessToken, user.user.id), 403, 'FORBIDDEN')
      expect((await rowOf(user.user.id)).suspendedAt).toBeNull()
    })
  })

  describe('GET /admin/users', () => {
    it('filters by role, status and search, with each account’s status, suspension and services count', async () => {
      const tag = unique('find')
      await createUser(ctx, { fullName: `Active ${tag}` })
      await createUser(ctx, { fullName: `Inactive ${tag}`, isActive: false })
      const suspended = await createUser(ctx, { fullName: `Suspended ${tag}` })
      await createUser(ctx, { fullName: `Staff ${tag}`, isStaff: true })
      await createUser(ctx, { fullName: `Boss ${tag}`, isStaff: true, isSuperuser: true })
      await suspend(manager.accessToken, suspended.user.id, { reason: 'Fraud' })
      const names = async (query: string) => {
        const response = await listUsers(viewer.accessToken, `?search=${tag}&${query}`)
        expect(response.statusCode, response.body).toBe(200)
        return response.json().data.items.map((item: { fullName: string }) => item.fullName.split(' ')[0]).sort()
      }
      expect(await names('')).toEqual(['Active', 'Boss', 'Inactive', 'Staff', 'Suspended'])
      expect(await names('role=client')).toEqual(['Active', 'Inactive', 'Suspended'])
      expect(await names('role=staff')).toEqual(['Staff'])
      expect(await names('role=admin')).toEqual(['Boss'])
      expect(await names('status=active')).toEqual(['Active', 'Boss', 'Staff'])
      expect(await names('status=inactive')).toEqual(['Inactive'])
      expect(await names('status=suspended')).toEqual(['Suspended'])
      expect(await names('role=client&status=active')).toEqual(['Active'])

      const item = (await listUsers(viewer.accessToken, `?search=${tag}&status=suspended`)).json().data.items[0]
      expect(item).toMatchObject({ id: suspended.user.id, status: 'suspended', role: 'client', suspensionReason: 'Fraud', suspendedAt: expect.any(String), servicesCount: 0 })
      expect(item).not.toHaveProperty('passwordHash')
      expect(item).not.toHaveProperty('notes')
      const page = (await listUsers(viewer.accessToken, `?search=${tag}&limit=2&page=2`)).json().data
      expect(page.pagination).toEqual({ page: 2, limit: 2, total: 5, pages: 3, hasNext: true, hasPrev: true })
    })

    it.each([
      ['role=king', 'role'],
      ['status=zombie', 'status'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['page=0', 'page'],
      ['search=', 'search'],
      ['isStaff=true', 'isStaff'],
    ])('refuses %s (400 naming the filter)', async (query, field) => {
      expectError(await listUsers(viewer.accessToken, `?${query}`), 400, 'VALIDATION_ERROR', [field])
    })

    it('answers 401 without a token and 403 without view_users', async () => {
      expectError(await listUsers(undefined), 401, 'UNAUTHENTICATED')
      expectError(await listUsers(client.accessToken), 403, 'FORBIDDEN')
      expectError(await listUsers(bareStaff.accessToken), 403, 'FORBIDDEN')
    })
  })

  describe('GET /admin/stats', () => {
    it('answers every module’s section to any staff member', async () => {
      const data = await stats()
      expect(Object.keys(data).sort()).toEqual(['kyc', 'orders', 'services', 'users', 'wallet', 'webhooks'])
      expect(data.users).toEqual({ total: expect.any(Number), active: expect.any(Number), staff: expect.any(Number), suspended: expect.any(Number), newLast7Days: expect.any(Number), newLast30Days: expect.any(Number) })
      expect(data.services).toEqual({ total: expect.any(Number), byStatus: { pending: expect.any(Number), active: expect.any(Number), rejected: expect.any(Number), paused: expect.any(Number) } })
      expect(data.wallet).toEqual({ platformRevenue: expect.any(Number), escrowHeld: expect.any(Number), clearingHeld: expect.any(Number), payoutsPending: { count: expect.any(Number), amount: expect.any(Number) }, currency: 'USD' })
      expect(data.orders).toEqual({ total: expect.any(Number), byStatus: { pending: expect.any(Number), in_progress: expect.any(Number), delivered: expect.any(Number), completed: expect.any(Number), cancelled: expect.any(Number), disputed: expect.any(Number) }, grossVolume: expect.any(Number) })
      expect(data.webhooks).toEqual({ endpoints: { enabled: expect.any(Number), disabled: expect.any(Number) }, deliveries: { waiting: expect.any(Number), retrying: expect.any(Number), failed: expect.any(Number) } })
      expect(data.kyc).toEqual({ pendingReview: expect.any(Number) })
      expect((await request(ctx.app, { method: 'GET', url: '/admin/stats', token: admin.accessToken })).statusCode).toBe(200)
    })

    it('answers 401 without a token and 403 to a user who is not staff', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/stats' }), 401, 'UNAUTHENTICATED')
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/stats', token: client.accessToken }), 403, 'FORBIDDEN')
    })

    it('follows every change: users, suspensions, services by status, escrow, revenue, payouts and KYC, before and after the counters are folded', async () => {
      const before = await stats()
      const newcomer = await createUser(ctx)
      await createUser(ctx, { isActive: false })
      await createUser(ctx, { isStaff: true })
      await suspend(manager.accessToken, newcomer.user.id)

      const seller = await createUser(ctx)
      const categoryId = await createCategory(ctx)
      const pending = await publishService(ctx, seller.accessToken, categoryId)
      const approved = await publishService(ctx, seller.accessToken, categoryId)
      const moderator = await createUser(ctx, { permissions: ['approve_services'] })
      expect((await request(ctx.app, { method: 'POST', url: `/admin/services/${approved}/approve`, token: moderator.accessToken })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'DELETE', url: `/services/${pending}`, token: seller.accessToken })).statusCode).toBe(200)

      // Money: a deposit, 30.00 into escrow of which 3.00 goes to the platform, a pending payout of 20.00.
      expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: seller.accessToken, payload: { amount: 100 } })).statusCode).toBe(201)
      const { ledger } = ctx.app.container.wallet
      await ctx.database.db.transaction(async (tx) => {
        await ledger.transfer(tx, { from: { userId: seller.user.id, kind: 'available' }, to: { userId: seller.user.id, kind: 'escrow' }, amountCents: 3000, type: 'order_payment', description: 'Order' })
        await ledger.transfer(tx, { from: { userId: seller.user.id, kind: 'escrow' }, to: { platform: 'revenue' }, amountCents: 300, type: 'order_earning', description: 'Fee' })
      })
      await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, seller.user.id))
      expect((await request(ctx.app, { method: 'POST', url: '/wallet/payout', token: seller.accessToken, payload: { amount: 20, method: 'paypal', details: { email: 'me@example.test' } } })).statusCode).toBe(201)

      const kycSeller = await createUser(ctx)
      await submitKyc(ctx.app, kycSeller.accessToken)

      const after = await stats()
      expect(after.users).toEqual({
        total: before.users.total + 6,
        active: before.users.active + 4,
        staff: before.users.staff + 2,
        suspended: before.users.suspended + 1,
        newLast7Days: before.users.newLast7Days + 6,
        newLast30Days: before.users.newLast30Days + 6,
      })
      expect(after.services.byStatus).toEqual({ ...before.services.byStatus, active: before.services.byStatus.active + 1 })
      expect(after.services.total).toBe(before.services.total + 1)
      expect(after.wallet).toEqual({
        platformRevenue: before.wallet.platformRevenue + 3,
        escrowHeld: before.wallet.escrowHeld + 27,
        clearingHeld: before.wallet.clearingHeld,
        payoutsPending: { count: before.wallet.payoutsPending.count + 1, amount: before.wallet.payoutsPending.amount + 20 },
        currency: 'USD',
      })
      expect(after.kyc.pendingReview).toBe(before.kyc.pendingReview + 1)

      // The worker folds the appended deltas into the counters: the figures do not move.
      expect(await foldStatCounters(ctx.database.db)).toBeGreaterThan(0)
      expect(await ctx.database.db.select().from(statCounterDeltas)).toEqual([])
      expect(await stats()).toEqual(after)
    })

    it('counts new accounts in the last 7 and 30 days on the clock', async () => {
      const before = await stats()
      ctx.clock.advance(10 * DAY)
      try {
        // Tokens issued before the jump have expired: a session opened at the new time.
        const later = await stats((await ctx.app.container.auth.issueSession(admin.user)).accessToken)
        expect(later.users.newLast30Days).toBe(before.users.newLast30Days)
        expect(later.users.newLast7Days).toBe(0)
      } finally {
        ctx.clock.advance(-10 * DAY)
      }
    })
  })
})
