import { eq } from 'drizzle-orm'
import type { LightMyRequestResponse } from 'fastify'
import { untilAQueryWaitsForALock } from '../../../test/setup/locks.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createSuperuser, createUser, unique } from '../../../test/factories/users.ts'
import { MINUTE } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { permissions } from '../../access/access.ts'
import { roles, userRoles } from './roles.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

interface RoleJson {
  id: string
  name: string
  permissions: string[]
  createdAt: string
  updatedAt: string
}

describe('roles routes (/admin/roles, superuser only)', () => {
  let ctx: TestContext
  let admin: string
  let allPowerfulStaff: string
  let client: string

  beforeAll(async () => {
    ctx = await createTestApp()
    admin = (await createSuperuser(ctx)).accessToken
    allPowerfulStaff = (await createUser(ctx, { permissions: [...permissions] })).accessToken
    client = (await createUser(ctx)).accessToken
  })
  afterAll(() => ctx.close())

  const roleRow = async (id: string) => {
    const [row] = await ctx.database.db.select().from(roles).where(eq(roles.id, id))
    return row
  }

  /**
   * Sends a request while another transaction holds an uncommitted role called `name`, then
   * commits that role. On PostgreSQL the request gets past its "is the name free?" check and
   * blocks on the unique index until the commit; PGlite has one connection, so the request waits
   * for the whole transaction instead.
   */
  async function whileRoleUncommitted(name: string, send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
    let pending: Promise<LightMyRequestResponse> | undefined
    await ctx.database.db.transaction(async (tx) => {
      const now = ctx.clock.now()
      await tx.insert(roles).values({ id: newId(), name, permissions: ['view_kyc'], createdAt: now, updatedAt: now })
      pending = send()
      if (ctx.database.kind === 'postgres') await untilAQueryWaitsForALock(ctx.database.db)
    })
    return pending!
  }

  const create = async (name = unique('role'), rolePermissions: string[] = ['view_users']): Promise<RoleJson> => {
    const response = await request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload: { name, permissions: rolePermissions } })
    expect(response.statusCode).toBe(201)
    return response.json().data
  }

  describe('access', () => {
    const calls = [
      { label: 'GET list', method: 'GET', url: '/admin/roles' },
      { label: 'GET one', method: 'GET', url: `/admin/roles/${UNKNOWN_ID}` },
      { label: 'POST', method: 'POST', url: '/admin/roles', payload: { name: 'Sneaky role', permissions: ['view_users'] } },
      { label: 'PUT', method: 'PUT', url: `/admin/roles/${UNKNOWN_ID}`, payload: { name: 'Sneaky rename' } },
      { label: 'DELETE', method: 'DELETE', url: `/admin/roles/${UNKNOWN_ID}` },
    ] as const

    it.each(calls)('refuses $label without a token (401 UNAUTHENTICATED)', async (call) => {
      const payload = 'payload' in call ? call.payload : undefined
      expectError(await request(ctx.app, { method: call.method, url: call.url, payload }), 401, 'UNAUTHENTICATED')
    })

    it.each(calls)('refuses a client on $label (403 FORBIDDEN)', async (call) => {
      const payload = 'payload' in call ? call.payload : undefined
      expectError(await request(ctx.app, { method: call.method, url: call.url, token: client, payload }), 403, 'FORBIDDEN')
    })

    it.each(calls)('refuses staff holding every permission but not superuser on $label (403 FORBIDDEN)', async (call) => {
      const payload = 'payload' in call ? call.payload : undefined
      expectError(await request(ctx.app, { method: call.method, url: call.url, token: allPowerfulStaff, payload }), 403, 'FORBIDDEN')
    })

    it('creates nothing when a non-superuser tries to create a role', async () => {
      const name = unique('sneaky')
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/roles', token: allPowerfulStaff, payload: { name, permissions: ['view_users'] } }), 403, 'FORBIDDEN')
      expect(await ctx.database.db.select().from(roles).where(eq(roles.name, name))).toEqual([])
    })

    it('leaves a role untouched when a non-superuser tries to change or delete it', async () => {
      const role = await create(unique('guarded'), ['view_users'])
      const before = await roleRow(role.id)
      expectError(await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: allPowerfulStaff, payload: { permissions: [] } }), 403, 'FORBIDDEN')
      expectError(await request(ctx.app, { method: 'DELETE', url: `/admin/roles/${role.id}`, token: allPowerfulStaff }), 403, 'FORBIDDEN')
      expect(await roleRow(role.id)).toEqual(before)
    })
  })

  describe('POST /admin/roles', () => {
    it('creates a role (201) and stores it', async () => {
      const name = unique('Support ')
      const response = await request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload: { name, permissions: ['view_users', 'view_orders'] } })
      expect(response.statusCode).toBe(201)
      const body = response.json()
      expect(body.success).toBe(true)
      expect(Object.keys(body.data).sort()).toEqual(['createdAt', 'id', 'name', 'permissions', 'updatedAt'])
      expect(body.data).toMatchObject({ name, permissions: ['view_users', 'view_orders'], createdAt: ctx.clock.now().toISOString(), updatedAt: ctx.clock.now().toISOString() })
      expect(body.data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      expect(await roleRow(body.data.id)).toMatchObject({ name, permissions: ['view_users', 'view_orders'] })
    })

    it('accepts a role with no permissions and one with all of them', async () => {
      expect((await create(unique('empty'), [])).permissions).toEqual([])
      expect([...(await create(unique('everything'), [...permissions])).permissions].sort()).toEqual([...permissions].sort())
    })

    it('stores a permission listed twice only once', async () => {
      const role = await create(unique('dupes'), ['view_kyc', 'view_kyc', 'manage_kyc'])
      expect(role.permissions).toEqual(['view_kyc', 'manage_kyc'])
      expect((await roleRow(role.id))!.permissions).toEqual(['view_kyc', 'manage_kyc'])
    })

    it('refuses an unknown permission value (400 on permissions.0) and creates nothing', async () => {
      const name = unique('badperm')
      const response = await request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload: { name, permissions: ['delete_everything'] } })
      expectError(response, 400, 'VALIDATION_ERROR', ['permissions.0'])
      expect(await ctx.database.db.select().from(roles).where(eq(roles.name, name))).toEqual([])
    })

    it('names the position of the unknown permission (400 on permissions.1)', async () => {
      const response = await request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload: { name: unique('badperm'), permissions: ['view_users', 'VIEW_USERS'] } })
      expectError(response, 400, 'VALIDATION_ERROR', ['permissions.1'])
    })

    it('refuses a name already used by another role (400 on name) and keeps one role', async () => {
      const name = unique('taken')
      await create(name)
      const response = await request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload: { name, permissions: ['manage_users'] } })
      expectError(response, 400, 'VALIDATION_ERROR', ['name'])
      const rows = await ctx.database.db.select().from(roles).where(eq(roles.name, name))
      expect(rows).toHaveLength(1)
      expect(rows[0]!.permissions).toEqual(['view_users'])
    })

    it('answers a name taken by a concurrent creation with 400 on name, not a server error', async () => {
      const name = unique('race')
      const response = await whileRoleUncommitted(name, () =>
        request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload: { name, permissions: ['view_users'] } }),
      )
      expectError(response, 400, 'VALIDATION_ERROR', ['name'])
      const rows = await ctx.database.db.select().from(roles).where(eq(roles.name, name))
      expect(rows).toHaveLength(1)
      expect(rows[0]!.permissions).toEqual(['view_kyc'])
    })

    it.each([
      ['name', { permissions: ['view_users'] }],
      ['permissions', { name: 'No permissions field' }],
      ['name', { name: 'x', permissions: [] }],
      ['name', { name: 'n'.repeat(51), permissions: [] }],
      ['name', { name: ' padded ', permissions: [] }],
      ['name', { name: 12, permissions: [] }],
      ['permissions', { name: 'Not an array', permissions: 'view_users' }],
      ['colour', { name: 'Extra field', permissions: [], colour: 'red' }],
    ])('refuses a bad body (400 on %s)', async (field, payload) => {
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload }), 400, 'VALIDATION_ERROR', [field])
    })

    it('refuses more than 22 permission entries (400 on permissions)', async () => {
      const payload = { name: unique('long'), permissions: [...permissions, ...permissions, 'view_users'] }
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/roles', token: admin, payload }), 400, 'VALIDATION_ERROR', ['permissions'])
    })
  })

  describe('GET /admin/roles and /admin/roles/{roleId}', () => {
    it('lists every role, ordered by name', async () => {
      const later = await create(`zz ${unique()}`, ['view_kyc'])
      const earlier = await create(`aa ${unique()}`, ['view_orders'])
      const response = await request(ctx.app, { method: 'GET', url: '/admin/roles', token: admin })
      expect(response.statusCode).toBe(200)
      const list = response.json().data as RoleJson[]
      expect(list).toContainEqual(later)
      expect(list).toContainEqual(earlier)
      const names = list.map((role) => role.name)
      expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
      expect(list).toHaveLength(await ctx.database.db.$count(roles))
    })

    it('returns one role', async () => {
      const role = await create(unique('one'), ['approve_withdrawals', 'view_accounts'])
      const response = await request(ctx.app, { method: 'GET', url: `/admin/roles/${role.id}`, token: admin })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: role })
    })

    it('answers an unknown role id with 404 NOT_FOUND', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: `/admin/roles/${UNKNOWN_ID}`, token: admin }), 404, 'NOT_FOUND')
    })

    it('answers a malformed role id with 404 NOT_FOUND', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/roles/not-a-uuid', token: admin }), 404, 'NOT_FOUND')
    })
  })

  describe('PUT /admin/roles/{roleId}', () => {
    it('renames a role and keeps its permissions', async () => {
      const role = await create(unique('old'), ['view_kyc'])
      ctx.clock.advance(MINUTE)
      const name = unique('new')
      const response = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: { name } })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toEqual({ ...role, name, updatedAt: ctx.clock.now().toISOString() })
      expect(await roleRow(role.id)).toMatchObject({ name, permissions: ['view_kyc'] })
    })

    it('replaces the permissions and keeps the name', async () => {
      const role = await create(unique('perm'), ['view_kyc'])
      const response = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: { permissions: ['manage_orders', 'resolve_disputes', 'manage_orders'] } })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ id: role.id, name: role.name, permissions: ['manage_orders', 'resolve_disputes'] })
      expect(await roleRow(role.id)).toMatchObject({ name: role.name, permissions: ['manage_orders', 'resolve_disputes'] })
    })

    it('changes name and permissions together, and accepts the role keeping its own name', async () => {
      const role = await create(unique('both'), ['view_kyc'])
      const renamed = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: { name: `${role.name}2`, permissions: [] } })
      expect(renamed.statusCode).toBe(200)
      expect(renamed.json().data).toMatchObject({ name: `${role.name}2`, permissions: [] })
      const same = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: { name: `${role.name}2` } })
      expect(same.statusCode).toBe(200)
      expect(await roleRow(role.id)).toMatchObject({ name: `${role.name}2`, permissions: [] })
    })

    it("refuses another role's name (400 on name) and leaves the role unchanged", async () => {
      const first = await create(unique('first'))
      const second = await create(unique('second'))
      const before = await roleRow(second.id)
      const response = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${second.id}`, token: admin, payload: { name: first.name } })
      expectError(response, 400, 'VALIDATION_ERROR', ['name'])
      expect(await roleRow(second.id)).toEqual(before)
    })

    it('answers a rename to a name taken by a concurrent creation with 400 on name, not a server error', async () => {
      const role = await create(unique('renamed'), ['view_users'])
      const before = await roleRow(role.id)
      const name = unique('race')
      const response = await whileRoleUncommitted(name, () => request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: { name } }))
      expectError(response, 400, 'VALIDATION_ERROR', ['name'])
      expect(await roleRow(role.id)).toEqual(before)
    })

    it('refuses an empty body (400 on body)', async () => {
      const role = await create()
      expectError(await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: {} }), 400, 'VALIDATION_ERROR', ['body'])
    })

    it('refuses an unknown permission (400 on permissions.0) and leaves the role unchanged', async () => {
      const role = await create(unique('keep'), ['view_users'])
      const response = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: { permissions: ['superpowers'] } })
      expectError(response, 400, 'VALIDATION_ERROR', ['permissions.0'])
      expect((await roleRow(role.id))!.permissions).toEqual(['view_users'])
    })

    it('refuses a field that is not name or permissions (400 on that field)', async () => {
      const role = await create()
      expectError(await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role.id}`, token: admin, payload: { id: UNKNOWN_ID } }), 400, 'VALIDATION_ERROR', ['id'])
    })

    it('answers an unknown or malformed role id with 404 NOT_FOUND', async () => {
      expectError(await request(ctx.app, { method: 'PUT', url: `/admin/roles/${UNKNOWN_ID}`, token: admin, payload: { name: unique('ghost') } }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'PUT', url: '/admin/roles/not-a-uuid', token: admin, payload: { name: unique('ghost') } }), 404, 'NOT_FOUND')
    })
  })

  describe('DELETE /admin/roles/{roleId}', () => {
    it('deletes a role and its assignments', async () => {
      const staff = await createUser(ctx, { permissions: ['view_orders'] })
      const [role] = await ctx.app.container.roles.rolesOf(ctx.database.db, staff.user.id)
      const response = await request(ctx.app, { method: 'DELETE', url: `/admin/roles/${role!.id}`, token: admin })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { message: expect.any(String) } })
      expect(await roleRow(role!.id)).toBeUndefined()
      expect(await ctx.database.db.select().from(userRoles).where(eq(userRoles.roleId, role!.id))).toEqual([])
      expectError(await request(ctx.app, { method: 'GET', url: `/admin/roles/${role!.id}`, token: admin }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'DELETE', url: `/admin/roles/${role!.id}`, token: admin }), 404, 'NOT_FOUND')
    })

    it('answers an unknown or malformed role id with 404 NOT_FOUND', async () => {
      expectError(await request(ctx.app, { method: 'DELETE', url: `/admin/roles/${UNKNOWN_ID}`, token: admin }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'DELETE', url: '/admin/roles/not-a-uuid', token: admin }), 404, 'NOT_FOUND')
    })
  })

  describe('effect on staff on their very next request', () => {
    it('takes view_users away at once when the role loses it, and gives it back when restored', async () => {
      const staff = await createUser(ctx, { permissions: ['view_users'] })
      const [role] = await ctx.app.container.roles.rolesOf(ctx.database.db, staff.user.id)
      expect((await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken })).statusCode).toBe(200)

      const changed = await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role!.id}`, token: admin, payload: { permissions: ['view_orders'] } })
      expect(changed.statusCode).toBe(200)
      expectError(await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken }), 403, 'FORBIDDEN')
      const me = await request(ctx.app, { method: 'GET', url: '/users/me', token: staff.accessToken })
      expect(me.json().data.permissions).toEqual(['view_orders'])

      await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role!.id}`, token: admin, payload: { permissions: ['view_orders', 'view_users'] } })
      expect((await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken })).statusCode).toBe(200)
    })

    it('grants a new permission at once when it is added to the role', async () => {
      const staff = await createUser(ctx, { permissions: ['view_orders'] })
      const [role] = await ctx.app.container.roles.rolesOf(ctx.database.db, staff.user.id)
      expectError(await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken }), 403, 'FORBIDDEN')
      await request(ctx.app, { method: 'PUT', url: `/admin/roles/${role!.id}`, token: admin, payload: { permissions: ['view_orders', 'view_users'] } })
      expect((await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken })).statusCode).toBe(200)
    })

    it('takes every permission of a deleted role away at once', async () => {
      const staff = await createUser(ctx, { permissions: ['view_users', 'manage_users'] })
      const [role] = await ctx.app.container.roles.rolesOf(ctx.database.db, staff.user.id)
      expect((await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken })).statusCode).toBe(200)

      expect((await request(ctx.app, { method: 'DELETE', url: `/admin/roles/${role!.id}`, token: admin })).statusCode).toBe(200)
      expectError(await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken }), 403, 'FORBIDDEN')
      const me = await request(ctx.app, { method: 'GET', url: '/users/me', token: staff.accessToken })
      expect(me.statusCode).toBe(200)
      expect(me.json().data).toMatchObject({ role: 'staff', permissions: [] })
    })

    it('keeps the permissions a staff member holds through another role when one role is deleted', async () => {
      const staff = await createUser(ctx, { permissions: ['view_users'] })
      const [first] = await ctx.app.container.roles.rolesOf(ctx.database.db, staff.user.id)
      const second = await create(unique('backup'), ['view_users', 'view_kyc'])
      await ctx.database.db.transaction((tx) => ctx.app.container.roles.assignRoles(tx, staff.user.id, [first!.id, second.id]))

      expect((await request(ctx.app, { method: 'DELETE', url: `/admin/roles/${first!.id}`, token: admin })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken })).statusCode).toBe(200)
      const me = await request(ctx.app, { method: 'GET', url: '/users/me', token: staff.accessToken })
      expect(me.json().data.permissions).toEqual(['view_kyc', 'view_users'])
    })
  })
})
