import { eq } from 'drizzle-orm'
import type { LightMyRequestResponse } from 'fastify'
import { untilAQueryWaitsForALock } from '../../../test/setup/locks.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createSuperuser, createUser, DEFAULT_PASSWORD, unique, type TestUser, expectUserShape } from '../../../test/factories/users.ts'
import { newId } from '../../lib/ids.ts'
import { hashPassword } from '../../lib/passwords.ts'
import { permissions } from '../../access/access.ts'
import { userRoles } from '../roles/roles.table.ts'
import { users } from '../users/users.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'
const PASSWORD = 'Staff1234'
describe('admin routes', () => {
  let ctx: TestContext
  let admin: TestUser
  let allPowerfulStaff: TestUser
  let client: TestUser

  beforeAll(async () => {
    ctx = await createTestApp()
    admin = await createSuperuser(ctx)
    allPowerfulStaff = await createUser(ctx, { permissions: [...permissions] })
    client = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  const rowOf = async (id: string) => {
    const [row] = await ctx.database.db.select().from(users).where(eq(users.id, id))
    return row
  }
  const rowsByEmail = (email: string) => ctx.database.db.select().from(users).where(eq(users.email, email))
  const roleIdsOf = async (userId: string) =>
    (await ctx.database.db.select().from(userRoles).where(eq(userRoles.userId, userId))).map((row) => row.roleId).sort()
  const newRole = (permissionList: (typeof permissions)[number][] = ['view_users'], name = unique('role')) =>
    ctx.app.container.roles.createRole(admin.user, { name, permissions: permissionList })
  const login = (email: string, password: string) => request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email, password } })
  const me = (token: string) => request(ctx.app, { method: 'GET', url: '/users/me', token })

  const staffBody = (overrides: Record<string, unknown> = {}) => {
    const name = unique('st')
    return { fullName: 'Support Person', username: name.slice(0, 20), email: `${name}@example.test`, password: PASSWORD, ...overrides }
  }

  describe('POST /admin/staff', () => {
    const createStaff = (payload: Record<string, unknown>, token = admin.accessToken) => request(ctx.app, { method: 'POST', url: '/admin/staff', token, payload })

    it('creates an active staff account with its role (201), and the account can log in at once', async () => {
      const role = await newRole(['view_users', 'view_orders'])
      const body = staffBody({ roleId: role.id })
      const response = await createStaff(body)
      expect(response.statusCode).toBe(201)
      const data = response.json().data
      expectUserShape(data, ['roles'])
      expect(data).toMatchObject({
        email: body.email,
        username: body.username,
        fullName: 'Support Person',
        isActive: true,
        isStaff: true,
        isSuperuser: false,
        role: 'staff',
        roles: [role],
      })
      expect(response.body).not.toMatch(/passwordHash|password_hash|Staff1234/)

      const row = await rowOf(data.id)
      expect(row).toMatchObject({ email: body.email, isActive: true, isStaff: true, isSuperuser: false })
      expect(row!.activatedAt).not.toBeNull()
      expect(await roleIdsOf(data.id)).toEqual([role.id])

      const session = await login(body.email, PASSWORD)
      expect(session.statusCode).toBe(200)
      const token = session.json().data.accessToken
      expect((await me(token)).json().data).toMatchObject({ id: data.id, role: 'staff', permissions: ['view_orders', 'view_users'] })
      expect((await request(ctx.app, { method: 'GET', url: '/users', token })).statusCode).toBe(200)
    })

    it('creates a staff account without roles when no roleId is given', async () => {
      const body = staffBody()
      const response = await createStaff(body)
      expect(response.statusCode).toBe(201)
      expect(response.json().data).toMatchObject({ isActive: true, isStaff: true, roles: [] })
      expect(await roleIdsOf(response.json().data.id)).toEqual([])
      const session = await login(body.email, PASSWORD)
      expect(session.statusCode).toBe(200)
      expect((await me(session.json().data.accessToken)).json().data.permissions).toEqual([])
    })

    it('normalises the e-mail and trims the full name', async () => {
      const name = unique('norm')
      const response = await createStaff(staffBody({ email: `  ${name.toUpperCase()}@Example.TEST `, fullName: '  Padded Name  ' }))
      expect(response.statusCode).toBe(201)
      expect(response.json().data).toMatchObject({ email: `${name}@example.test`, fullName: 'Padded Name' })
      expect(await rowsByEmail(`${name}@example.test`)).toHaveLength(1)
    })

    it('refuses an e-mail already registered, in any case (400 on email)', async () => {
      const first = staffBody()
      expect((await createStaff(first)).statusCode).toBe(201)
      const response = await createStaff(staffBody({ email: first.email.toUpperCase() }))
      expectError(response, 400, 'VALIDATION_ERROR', ['email'])
      expect(await rowsByEmail(first.email)).toHaveLength(1)
    })

    it('refuses a username already taken (400 on username) and creates nothing', async () => {
      const body = staffBody({ username: client.user.username })
      expectError(await createStaff(body), 400, 'VALIDATION_ERROR', ['username'])
      expect(await rowsByEmail(body.email)).toEqual([])
    })

    it('names both e-mail and username when both are taken', async () => {
      const response = await createStaff(staffBody({ email: client.user.email, username: client.user.username }))
      expectError(response, 400, 'VALIDATION_ERROR', ['email', 'username'])
    })

    it('refuses an unknown roleId (400 on roleId) and rolls the account back', async () => {
      const body = staffBody({ roleId: UNKNOWN_ID })
      expectError(await createStaff(body), 400, 'VALIDATION_ERROR', ['roleId'])
      expect(await rowsByEmail(body.email)).toEqual([])
      expectError(await login(body.email, PASSWORD), 401, 'UNAUTHENTICATED')

      // Nothing of the failed attempt remains: the same e-mail and username are free.
      const role = await newRole()
      const retry = await createStaff({ ...body, roleId: role.id })
      expect(retry.statusCode).toBe(201)
      expect(await rowsByEmail(body.email)).toHaveLength(1)
    })

    it('refuses a roleId that is not an id (400 on roleId)', async () => {
      const body = staffBody({ roleId: 'support' })
      expectError(await createStaff(body), 400, 'VALIDATION_ERROR', ['roleId'])
      expect(await rowsByEmail(body.email)).toEqual([])
    })

    it('answers an e-mail taken by a concurrent registration with 400 on email, not a server error', async () => {
      const body = staffBody()
      let pending: Promise<LightMyRequestResponse> | undefined
      await ctx.database.db.transaction(async (tx) => {
        const now = ctx.clock.now()
        await tx.insert(users).values({
          id: newId(),
          email: body.email,
          username: unique('other').slice(0, 20),
          fullName: 'Concurrent Registrant',
          passwordHash: await hashPassword(DEFAULT_PASSWORD),
          createdAt: now,
          updatedAt: now,
        })
        pending = createStaff(body)
        if (ctx.database.kind === 'postgres') await untilAQueryWaitsForALock(ctx.database.db)
      })
      expectError(await pending!, 400, 'VALIDATION_ERROR', ['email'])
      const rows = await rowsByEmail(body.email)
      expect(rows).toHaveLength(1)
      expect(rows[0]!.fullName).toBe('Concurrent Registrant')
    })

    it.each([
      [['email', 'fullName', 'password', 'username'], {}],
      [['password'], { password: 'weakpassword' }],
      [['password'], { password: 'Sh0rt' }],
      [['email'], { email: 'not-an-email' }],
      [['fullName'], { fullName: 'A' }],
      [['username'], { username: 'Has Spaces' }],
      [['username'], { username: 'ab' }],
      [['isSuperuser'], { isSuperuser: true }],
    ])('refuses a bad body (400 on %s) and creates nothing', async (fields, overrides) => {
      const body = Object.keys(overrides).length === 0 ? {} : staffBody(overrides)
      expectError(await createStaff(body), 400, 'VALIDATION_ERROR', fields)
      if ('email' in body && typeof body.email === 'string' && body.email.includes('@')) expect(await rowsByEmail(body.email.trim())).toEqual([])
    })

    it('refuses a full name that is a single character once trimmed (400 on fullName) and creates nothing', async () => {
      const body = staffBody({ fullName: ' B ' })
      expectError(await createStaff(body), 400, 'VALIDATION_ERROR', ['fullName'])
      expect(await rowsByEmail(body.email)).toEqual([])
    })

    it('refuses staff holding every permission but not superuser (403 FORBIDDEN) and creates nothing', async () => {
      const body = staffBody()
      expectError(await createStaff(body, allPowerfulStaff.accessToken), 403, 'FORBIDDEN')
      expect(await rowsByEmail(body.email)).toEqual([])
    })

    it('refuses a client (403 FORBIDDEN)', async () => {
      expectError(await createStaff(staffBody(), client.accessToken), 403, 'FORBIDDEN')
    })

    it('refuses a request without a token (401 UNAUTHENTICATED)', async () => {
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/staff', payload: staffBody() }), 401, 'UNAUTHENTICATED')
    })
  })

  describe('PUT /admin/staff/{userId}/roles', () => {
    const setRoles = (userId: string, roleIds: unknown, token = admin.accessToken) =>
      request(ctx.app, { method: 'PUT', url: `/admin/staff/${userId}/roles`, token, payload: { roleIds } })

    it("replaces a staff member's roles and their permissions follow on the next request", async () => {
      const staff = await createUser(ctx, { permissions: ['view_users'] })
      const [previous] = await ctx.app.container.roles.rolesOf(ctx.database.db, staff.user.id)
      const kyc = await newRole(['view_kyc', 'manage_kyc'], unique('b-kyc'))
      const orders = await newRole(['view_orders'], unique('a-orders'))

      const response = await setRoles(staff.user.id, [kyc.id, orders.id])
      expect(response.statusCode).toBe(200)
      const data = response.json().data
      expectUserShape(data, ['roles'])
      expect(data).toMatchObject({ id: staff.user.id, isStaff: true, role: 'staff', roles: [orders, kyc] })
      expect(await roleIdsOf(staff.user.id)).toEqual([kyc.id, orders.id].sort())
      expect(await roleIdsOf(staff.user.id)).not.toContain(previous!.id)

      expect((await me(staff.accessToken)).json().data.permissions).toEqual(['manage_kyc', 'view_kyc', 'view_orders'])
      expectError(await request(ctx.app, { method: 'GET', url: '/users', token: staff.accessToken }), 403, 'FORBIDDEN')
    })

    it('stores a role listed twice once', async () => {
      const staff = await createUser(ctx, { isStaff: true })
      const role = await newRole(['view_accounts'])
      const response = await setRoles(staff.user.id, [role.id, role.id])
      expect(response.statusCode).toBe(200)
      expect(response.json().data.roles).toEqual([role])
      expect(await roleIdsOf(staff.user.id)).toEqual([role.id])
    })

    it('removes every role with an empty list', async () => {
      const staff = await createUser(ctx, { permissions: ['view_users'] })
      const response = await setRoles(staff.user.id, [])
      expect(response.statusCode).toBe(200)
      expect(response.json().data.roles).toEqual([])
      expect(await roleIdsOf(staff.user.id)).toEqual([])
      expect((await me(staff.accessToken)).json().data.permissions).toEqual([])
    })

    it('refuses a client (422 NOT_STAFF) and gives them no role', async () => {
      const target = await createUser(ctx)
      const role = await newRole()
      expectError(await setRoles(target.user.id, [role.id]), 422, 'NOT_STAFF')
      expect(await roleIdsOf(target.user.id)).toEqual([])
    })

    it('refuses an unknown role id (400 on roleIds) and keeps the current roles', async () => {
      const staff = await createUser(ctx, { permissions: ['view_users'] })
      const before = await roleIdsOf(staff.user.id)
      const role = await newRole()
      expectError(await setRoles(staff.user.id, [role.id, UNKNOWN_ID]), 400, 'VALIDATION_ERROR', ['roleIds'])
      expect(await roleIdsOf(staff.user.id)).toEqual(before)
    })

    it('refuses a malformed role id (400 on roleIds.0) and a missing list (400 on roleIds)', async () => {
      const staff = await createUser(ctx, { isStaff: true })
      expectError(await setRoles(staff.user.id, ['support']), 400, 'VALIDATION_ERROR', ['roleIds.0'])
      const missing = await request(ctx.app, { method: 'PUT', url: `/admin/staff/${staff.user.id}/roles`, token: admin.accessToken, payload: {} })
      expectError(missing, 400, 'VALIDATION_ERROR', ['roleIds'])
    })

    it('answers an unknown or malformed user id with 404 NOT_FOUND', async () => {
      expectError(await setRoles(UNKNOWN_ID, []), 404, 'NOT_FOUND')
      expectError(await setRoles('not-a-uuid', []), 404, 'NOT_FOUND')
    })

    it('refuses staff holding every permission but not superuser (403 FORBIDDEN) and keeps the roles', async () => {
      const staff = await createUser(ctx, { permissions: ['view_users'] })
      const before = await roleIdsOf(staff.user.id)
      expectError(await setRoles(staff.user.id, [], allPowerfulStaff.accessToken), 403, 'FORBIDDEN')
      expect(await roleIdsOf(staff.user.id)).toEqual(before)
    })

    it('refuses a request without a token (401 UNAUTHENTICATED)', async () => {
      expectError(await request(ctx.app, { method: 'PUT', url: `/admin/staff/${client.user.id}/roles`, payload: { roleIds: [] } }), 401, 'UNAUTHENTICATED')
    })
  })

  describe('POST /admin/users/{userId}/deactivate and /reactivate', () => {
    let manager: TestUser
    beforeAll(async () => {
      manager = await createUser(ctx, { permissions: ['manage_users'] })
    })

    const act = (action: 'deactivate' | 'reactivate', userId: string, token?: string) =>
      request(ctx.app, { method: 'POST', url: `/admin/users/${userId}/${action}`, token })

    it('deactivates a client (200): stored inactive, their token refused at once, login and refresh refused', async () => {
      const target = await createUser(ctx)
      expect((await me(target.accessToken)).statusCode).toBe(200)

      const response = await act('deactivate', target.user.id, manager.accessToken)
      expect(response.statusCode).toBe(200)
      const data = response.json().data
      expectUserShape(data)
      expect(data).toMatchObject({ id: target.user.id, isActive: false, role: 'client' })
      expect((await rowOf(target.user.id))!.isActive).toBe(false)

      expectError(await me(target.accessToken), 401, 'UNAUTHENTICATED')
      expectError(await login(target.user.email, target.password), 401, 'UNAUTHENTICATED')
      expectError(await request(ctx.app, { method: 'POST', url: '/auth/refresh', payload: { refreshToken: target.refreshToken } }), 401, 'UNAUTHENTICATED')
    })

    it('keeps an already deactivated user deactivated (200)', async () => {
      const target = await createUser(ctx, { isActive: false })
      const response = await act('deactivate', target.user.id, manager.accessToken)
      expect(response.statusCode).toBe(200)
      expect(response.json().data.isActive).toBe(false)
      expect((await rowOf(target.user.id))!.isActive).toBe(false)
    })

    it('reactivates a deactivated user (200): stored active and able to log in again', async () => {
      const target = await createUser(ctx)
      expect((await act('deactivate', target.user.id, manager.accessToken)).statusCode).toBe(200)

      const response = await act('reactivate', target.user.id, manager.accessToken)
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ id: target.user.id, isActive: true })
      expect((await rowOf(target.user.id))!.isActive).toBe(true)

      const session = await login(target.user.email, target.password)
      expect(session.statusCode).toBe(200)
      expect((await me(session.json().data.accessToken)).json().data).toMatchObject({ id: target.user.id, isActive: true })
    })

    it('refuses staff with manage_users acting on another staff member (403 FORBIDDEN) and leaves them active', async () => {
      const target = await createUser(ctx, { permissions: ['view_users'] })
      expectError(await act('deactivate', target.user.id, manager.accessToken), 403, 'FORBIDDEN')
      expect((await rowOf(target.user.id))!.isActive).toBe(true)
      expect((await me(target.accessToken)).statusCode).toBe(200)
    })

    it('refuses staff with every permission acting on a superuser (403 FORBIDDEN)', async () => {
      const target = await createSuperuser(ctx)
      expectError(await act('deactivate', target.user.id, allPowerfulStaff.accessToken), 403, 'FORBIDDEN')
      expect((await rowOf(target.user.id))!.isActive).toBe(true)
    })

    it('refuses staff with manage_users reactivating a deactivated staff member (403 FORBIDDEN)', async () => {
      const target = await createUser(ctx, { isStaff: true, isActive: false })
      expectError(await act('reactivate', target.user.id, manager.accessToken), 403, 'FORBIDDEN')
      expect((await rowOf(target.user.id))!.isActive).toBe(false)
    })

    it('lets a superuser deactivate and reactivate a staff member, whose token is refused meanwhile', async () => {
      const target = await createUser(ctx, { permissions: ['manage_users'] })
      const response = await act('deactivate', target.user.id, admin.accessToken)
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ isActive: false, role: 'staff' })
      expect((await rowOf(target.user.id))!.isActive).toBe(false)
      expectError(await me(target.accessToken), 401, 'UNAUTHENTICATED')
      expectError(await act('deactivate', client.user.id, target.accessToken), 401, 'UNAUTHENTICATED')
      expect((await rowOf(client.user.id))!.isActive).toBe(true)

      expect((await act('reactivate', target.user.id, admin.accessToken)).statusCode).toBe(200)
      expect((await login(target.user.email, target.password)).statusCode).toBe(200)
    })

    it('lets a superuser deactivate another superuser', async () => {
      const target = await createSuperuser(ctx)
      const response = await act('deactivate', target.user.id, admin.accessToken)
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ isActive: false, role: 'admin' })
      expectError(await me(target.accessToken), 401, 'UNAUTHENTICATED')
    })

    it('refuses deactivating or reactivating yourself (422 CANNOT_MODIFY_SELF) and stays active', async () => {
      expectError(await act('deactivate', manager.user.id, manager.accessToken), 422, 'CANNOT_MODIFY_SELF')
      expectError(await act('reactivate', manager.user.id, manager.accessToken), 422, 'CANNOT_MODIFY_SELF')
      expectError(await act('deactivate', admin.user.id, admin.accessToken), 422, 'CANNOT_MODIFY_SELF')
      expect((await rowOf(manager.user.id))!.isActive).toBe(true)
      expect((await rowOf(admin.user.id))!.isActive).toBe(true)
      expect((await me(manager.accessToken)).statusCode).toBe(200)
    })

    it.each(['deactivate', 'reactivate'] as const)('%s answers an unknown or malformed user id with 404 NOT_FOUND', async (action) => {
      expectError(await act(action, UNKNOWN_ID, manager.accessToken), 404, 'NOT_FOUND')
      expectError(await act(action, 'not-a-uuid', manager.accessToken), 404, 'NOT_FOUND')
    })

    it.each(['deactivate', 'reactivate'] as const)('%s refuses callers without manage_users (403 FORBIDDEN)', async (action) => {
      const target = await createUser(ctx, { isActive: action === 'deactivate' })
      const viewer = await createUser(ctx, { permissions: ['view_users'] })
      const clientWithRole = await createUser(ctx, { isStaff: false, permissions: ['manage_users'] })
      for (const caller of [client, viewer, clientWithRole]) {
        expectError(await act(action, target.user.id, caller.accessToken), 403, 'FORBIDDEN')
      }
      expect((await rowOf(target.user.id))!.isActive).toBe(action === 'deactivate')
    })

    it.each(['deactivate', 'reactivate'] as const)('%s refuses a request without a token or with a bad one (401 UNAUTHENTICATED)', async (action) => {
      expectError(await act(action, client.user.id), 401, 'UNAUTHENTICATED')
      expectError(await act(action, client.user.id, 'not-a-jwt'), 401, 'UNAUTHENTICATED')
      expect((await rowOf(client.user.id))!.isActive).toBe(true)
    })
  })

})
