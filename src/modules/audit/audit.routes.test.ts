import { eq, sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createCategory, publishService } from '../../../test/factories/services.ts'
import { createStaffTeam, createUser, unique, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { users } from '../users/users.table.ts'
import { auditLog } from './audit.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

describe('the audit log', () => {
  let ctx: TestContext
  let admin: TestUser
  let moderator: TestUser
  let cashier: TestUser
  let manager: TestUser
  let categoryId: string

  beforeAll(async () => {
    ctx = await createTestApp()
    const team = await createStaffTeam(ctx)
    ;[admin, moderator, cashier, manager] = [team.admin, team.moderator, team.cashier, team.manager]
    categoryId = await createCategory(ctx)
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const auditOf = (targetId: string) => ctx.database.db.select().from(auditLog).where(eq(auditLog.targetId, targetId))
  const post = (url: string, token: string | undefined, payload?: object, headers: Record<string, string> = {}) => request(ctx.app, { method: 'POST', url, token, payload, headers })
  const list = (token: string | undefined, query = '') => request(ctx.app, { method: 'GET', url: `/admin/audit${query}`, token })

  describe('staff actions write a row in their transaction, with the request id', () => {
    it('service moderation: approve and reject', async () => {
      const seller = await createUser(ctx)
      const approvedId = await publishService(ctx, seller.accessToken, categoryId)
      const approved = await post(`/admin/services/${approvedId}/approve`, moderator.accessToken, undefined, { 'x-request-id': 'moderation-approve-1' })
      expect(approved.statusCode).toBe(200)
      expect(await auditOf(approvedId)).toEqual([
        expect.objectContaining({ action: 'service.approve', actorId: moderator.user.id, targetType: 'service', reason: null, before: { status: 'pending' }, after: { status: 'active' }, requestId: 'moderation-approve-1' }),
      ])
      const rejectedId = await publishService(ctx, seller.accessToken, categoryId)
      const rejected = await post(`/admin/services/${rejectedId}/reject`, moderator.accessToken, { reason: 'Blurry images' })
      expect(rejected.statusCode).toBe(200)
      expect(await auditOf(rejectedId)).toEqual([
        expect.objectContaining({ action: 'service.reject', reason: 'Blurry images', after: { status: 'rejected' }, requestId: rejected.headers['x-request-id'] }),
      ])
      // A refused decision (already active) writes nothing.
      expectError(await post(`/admin/services/${approvedId}/approve`, moderator.accessToken), 422, 'INVALID_TRANSITION')
      expect(await auditOf(approvedId)).toHaveLength(1)
    })

    it('payout decisions, but not an owner cancelling their own payout', async () => {
      const seller = await createUser(ctx)
      await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, seller.user.id))
      expect((await post('/wallet/deposits', seller.accessToken, { amount: 100 })).statusCode).toBe(201)
      const ask = async () => (await post('/wallet/payout', seller.accessToken, { amount: 20, method: 'paypal', details: { email: 'me@example.test' } })).json().data.id as string
      const [first, second, third] = [await ask(), await ask(), await ask()]
      const approved = await post(`/admin/payouts/${first}/approve`, cashier.accessToken)
      expect(approved.statusCode).toBe(200)
      const rejected = await post(`/admin/payouts/${second}/reject`, cashier.accessToken, { reason: 'Account closed' })
      expect(rejected.statusCode).toBe(200)
      expect((await post(`/wallet/payouts/${third}/cancel`, seller.accessToken)).statusCode).toBe(200)
      expect(await auditOf(first)).toEqual([
        expect.objectContaining({ action: 'payout.approve', actorId: cashier.user.id, targetType: 'payout', before: { status: 'pending', amount: 20, userId: seller.user.id }, after: { status: 'processed' }, requestId: approved.headers['x-request-id'] }),
      ])
      expect(await auditOf(second)).toEqual([expect.objectContaining({ action: 'payout.reject', reason: 'Account closed', after: { status: 'rejected' }, requestId: rejected.headers['x-request-id'] })])
      expect(await auditOf(third)).toEqual([])
    })

    it('wallet adjustments, with the balance before and after', async () => {
      const user = await createUser(ctx)
      const response = await post(`/admin/wallets/${user.user.id}/adjustments`, admin.accessToken, { amount: 12.5, reason: 'Goodwill credit' })
      expect(response.statusCode).toBe(201)
      expect(await auditOf(user.user.id)).toEqual([
        expect.objectContaining({ action: 'wallet.adjust', actorId: admin.user.id, targetType: 'user', reason: 'Goodwill credit', before: { balance: 0 }, after: { balance: 12.5, amount: 12.5 }, requestId: response.headers['x-request-id'] }),
      ])
      expectError(await post(`/admin/wallets/${user.user.id}/adjustments`, admin.accessToken, { amount: -50, reason: 'Too much' }), 422, 'INSUFFICIENT_FUNDS')
      expect(await auditOf(user.user.id)).toHaveLength(1)
    })

    it('deactivation and reactivation', async () => {
      const user = await createUser(ctx)
      const off = await post(`/admin/users/${user.user.id}/deactivate`, manager.accessToken)
      const on = await post(`/admin/users/${user.user.id}/reactivate`, manager.accessToken)
      expect([off.statusCode, on.statusCode]).toEqual([200, 200])
      const rows = (await auditOf(user.user.id)).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
      expect(rows).toEqual([
        expect.objectContaining({ action: 'user.deactivate', actorId: manager.user.id, before: expect.objectContaining({ isActive: true }), after: expect.objectContaining({ isActive: false, status: 'inactive' }), requestId: off.headers['x-request-id'] }),
        expect.objectContaining({ action: 'user.reactivate', after: expect.objectContaining({ isActive: true, status: 'active' }), requestId: on.headers['x-request-id'] }),
      ])
    })

    it('staff creation, role assignments and role changes', async () => {
      const role = await post('/admin/roles', admin.accessToken, { name: unique('support'), permissions: ['view_users'] })
      expect(role.statusCode).toBe(201)
      const roleId = role.json().data.id as string
      const name = unique('st')
      const staff = await post('/admin/staff', admin.accessToken, { fullName: 'Support Person', username: name.slice(0, 20), email: `${name}@example.test`, password: 'Staff1234', roleId })
      expect(staff.statusCode).toBe(201)
      const staffId = staff.json().data.id as string
      const roles = await request(ctx.app, { method: 'PUT', url: `/admin/staff/${staffId}/roles`, token: admin.accessToken, payload: { roleIds: [] } })
      expect(roles.statusCode).toBe(200)
      const renamed = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${roleId}`, token: admin.accessToken, payload: { permissions: ['view_users', 'view_kyc'] } })
      expect(renamed.statusCode).toBe(200)
      const removed = await request(ctx.app, { method: 'DELETE', url: `/admin/roles/${roleId}`, token: admin.accessToken })
      expect(removed.statusCode).toBe(200)

      const staffRows = await auditOf(staffId)
      expect(staffRows).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ action: 'staff.create', actorId: admin.user.id, after: expect.objectContaining({ isStaff: true, roleIds: [roleId] }), requestId: staff.headers['x-request-id'] }),
          expect.objectContaining({ action: 'staff.set_roles', before: { roleIds: [roleId] }, after: { roleIds: [] }, requestId: roles.headers['x-request-id'] }),
        ]),
      )
      expect(JSON.stringify(staffRows)).not.toMatch(/Staff1234|argon2/)
      const roleRows = (await auditOf(roleId)).map((row) => [row.action, row.requestId])
      expect(roleRows).toEqual(
        expect.arrayContaining([
          ['role.create', role.headers['x-request-id']],
          ['role.update', renamed.headers['x-request-id']],
          ['role.delete', removed.headers['x-request-id']],
        ]),
      )
    })
  })

  describe('GET /admin/audit', () => {
    it('lists rows newest first, filtered by actor, target and action, paged', async () => {
      const user = await createUser(ctx)
      await post(`/admin/users/${user.user.id}/suspend`, manager.accessToken, { reason: 'Spam' })
      await post(`/admin/users/${user.user.id}/unsuspend`, manager.accessToken)
      await post(`/admin/users/${user.user.id}/deactivate`, admin.accessToken)

      const byTarget = await list(admin.accessToken, `?target=${user.user.id}`)
      expect(byTarget.statusCode).toBe(200)
      const { items, pagination } = byTarget.json().data
      expect(items.map((item: { action: string }) => item.action)).toEqual(['user.deactivate', 'user.unsuspend', 'user.suspend'])
      expect(pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1, hasNext: false, hasPrev: false })
      expect(items[2]).toEqual({
        id: expect.any(String),
        action: 'user.suspend',
        actorId: manager.user.id,
        targetType: 'user',
        targetId: user.user.id,
        reason: 'Spam',
        before: expect.objectContaining({ status: 'active' }),
        after: expect.objectContaining({ status: 'suspended' }),
        requestId: expect.any(String),
        createdAt: expect.any(String),
      })

      const byActor = (await list(admin.accessToken, `?target=${user.user.id}&actor=${manager.user.id}`)).json().data.items
      expect(byActor.map((item: { action: string }) => item.action)).toEqual(['user.unsuspend', 'user.suspend'])
      const byAction = (await list(admin.accessToken, `?action=user.suspend&target=${user.user.id}`)).json().data.items
      expect(byAction).toHaveLength(1)
      const paged = (await list(admin.accessToken, `?target=${user.user.id}&limit=2&page=2`)).json().data
      expect(paged.items.map((item: { action: string }) => item.action)).toEqual(['user.suspend'])
      expect(paged.pagination).toMatchObject({ total: 3, pages: 2, hasPrev: true, hasNext: false })
      expect((await list(admin.accessToken, `?actor=${UNKNOWN_ID}`)).json().data.items).toEqual([])
    })

    it('answers 401 without a token and 403 for staff who are not superusers', async () => {
      expectError(await list(undefined), 401, 'UNAUTHENTICATED')
      expectError(await list(manager.accessToken), 403, 'FORBIDDEN')
      expectError(await list((await createUser(ctx)).accessToken), 403, 'FORBIDDEN')
    })

    it.each([
      ['an actor that is not an id', '?actor=bob', 'actor'],
      ['a target that is not an id', '?target=42', 'target'],
      ['an action of the wrong form', '?action=DROP%20TABLE', 'action'],
      ['limit=0', '?limit=0', 'limit'],
      ['an unknown filter', '?ip=1.2.3.4', 'ip'],
    ])('refuses %s (400 naming it)', async (_label, query, field) => {
      expectError(await list(admin.accessToken, query), 400, 'VALIDATION_ERROR', [field])
    })
  })

  describe('append-only', () => {
    it('refuses UPDATE, DELETE and TRUNCATE in the database itself', async () => {
      const user = await createUser(ctx)
      await post(`/admin/users/${user.user.id}/deactivate`, admin.accessToken)
      const [row] = await auditOf(user.user.id)
      await expect(ctx.database.db.update(auditLog).set({ reason: 'edited' }).where(eq(auditLog.id, row!.id))).rejects.toThrow()
      await expect(ctx.database.db.delete(auditLog).where(eq(auditLog.id, row!.id))).rejects.toThrow()
      await expect(ctx.database.db.execute(sql`truncate audit_log`)).rejects.toThrow()
      expect(await auditOf(user.user.id)).toEqual([row])
    })

    it('rolls the row back with the action: a failed action leaves no audit row', async () => {
      const user = await createUser(ctx)
      expectError(await post(`/admin/wallets/${user.user.id}/adjustments`, admin.accessToken, { amount: -1, reason: 'Nothing to take' }), 422, 'INSUFFICIENT_FUNDS')
      expect(await auditOf(user.user.id)).toEqual([])
    })
  })
})
