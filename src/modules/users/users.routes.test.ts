import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createSuperuser, createUser, unique, expectUserShape } from '../../../test/factories/users.ts'
import { MINUTE } from '../../lib/clock.ts'
import { permissions, type Permission } from '../../access/access.ts'
import { users } from './users.table.ts'

describe('users routes', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  const rowOf = async (id: string) => {
    const [row] = await ctx.database.db.select().from(users).where(eq(users.id, id))
    return row!
  }

  describe('GET /users/me', () => {
    it('refuses a request without a token (401 UNAUTHENTICATED)', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/users/me' }), 401, 'UNAUTHENTICATED')
    })

    it('refuses a malformed token and a non-Bearer scheme (401 UNAUTHENTICATED)', async () => {
      const { accessToken } = await createUser(ctx)
      expectError(await request(ctx.app, { method: 'GET', url: '/users/me', token: 'not-a-jwt' }), 401, 'UNAUTHENTICATED')
      const basic = await request(ctx.app, { method: 'GET', url: '/users/me', headers: { authorization: `Basic ${accessToken}` } })
      expectError(basic, 401, 'UNAUTHENTICATED')
    })

    it('refuses the token of an inactive account (401 UNAUTHENTICATED)', async () => {
      const { accessToken } = await createUser(ctx, { isActive: false })
      expectError(await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken }), 401, 'UNAUTHENTICATED')
    })

    it('returns the current user with exactly the public fields and no private column', async () => {
      const { user, accessToken } = await createUser(ctx, { fullName: 'Grace Hopper' })
      const response = await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken })
      expect(response.statusCode).toBe(200)
      const body = response.json()
      expect(body.success).toBe(true)
      expectUserShape(body.data, ['permissions'])
      expect(body.data).toMatchObject({
        id: user.id,
        email: user.email,
        fullName: 'Grace Hopper',
        username: user.username,
        title: null,
        description: null,
        phone: null,
        isActive: true,
        isStaff: false,
        isSuperuser: false,
        isKYCVerified: false,
        role: 'client',
        lastLogin: null,
        createdAt: user.createdAt.toISOString(),
        updatedAt: user.updatedAt.toISOString(),
        permissions: [],
      })
      expect(response.body).not.toMatch(/passwordHash|password_hash|tokenVersion|token_version|notes/)
    })

    it('never shows admin notes even when the account has some', async () => {
      const { user, accessToken } = await createUser(ctx)
      await ctx.database.db.update(users).set({ notes: 'secret-note-for-staff' }).where(eq(users.id, user.id))
      const response = await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).not.toHaveProperty('notes')
      expect(response.body).not.toContain('secret-note-for-staff')
    })

    it('gives a superuser the role admin and all eleven permissions', async () => {
      const { accessToken } = await createSuperuser(ctx)
      const response = await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken })
      expect(response.statusCode).toBe(200)
      const data = response.json().data
      expect(data).toMatchObject({ role: 'admin', isStaff: true, isSuperuser: true })
      expect(data.permissions).toHaveLength(11)
      expect(data.permissions).toEqual([...permissions].sort())
    })

    it("gives a staff member exactly the union of their roles' permissions", async () => {
      const staff = await createUser(ctx, { permissions: ['view_users', 'manage_kyc'] })
      const { roles } = ctx.app.container
      const second = await roles.createRole(staff.user, { name: unique('role'), permissions: ['view_users', 'view_orders'] })
      const first = await roles.rolesOf(ctx.database.db, staff.user.id)
      await ctx.database.db.transaction((tx) => roles.assignRoles(tx, staff.user.id, [first[0]!.id, second.id]))

      const response = await request(ctx.app, { method: 'GET', url: '/users/me', token: staff.accessToken })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ role: 'staff', isStaff: true, isSuperuser: false })
      expect(response.json().data.permissions).toEqual(['manage_kyc', 'view_orders', 'view_users'])
    })

    it('gives staff without roles an empty permission list', async () => {
      const { accessToken } = await createUser(ctx, { isStaff: true })
      const response = await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ role: 'staff', permissions: [] })
    })

    it('gives a client who holds a role no permissions (roles count for staff only)', async () => {
      const { accessToken } = await createUser(ctx, { isStaff: false, permissions: ['view_users', 'manage_users'] })
      const response = await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ role: 'client', permissions: [] })
    })
  })

  describe('PUT and PATCH /users/me', () => {
    describe.each(['PUT', 'PATCH'] as const)('%s', (method) => {
      it('accepts the Variant A spelling (name, bio, phone) and stores it', async () => {
        const { user, accessToken } = await createUser(ctx)
        ctx.clock.advance(MINUTE)
        const response = await request(ctx.app, {
          method,
          url: '/users/me',
          token: accessToken,
          payload: { name: '  Ada Lovelace  ', bio: 'Analytical engines', phone: '+44 20 7946 0000' },
        })
        expect(response.statusCode).toBe(200)
        const data = response.json().data
        expectUserShape(data)
        expect(data).toMatchObject({ id: user.id, fullName: 'Ada Lovelace', description: 'Analytical engines', phone: '+44 20 7946 0000', title: null })
        expect(data.updatedAt).toBe(ctx.clock.now().toISOString())

        const row = await rowOf(user.id)
        expect(row).toMatchObject({ fullName: 'Ada Lovelace', description: 'Analytical engines', phone: '+44 20 7946 0000', title: null })
        expect(row.updatedAt.toISOString()).toBe(ctx.clock.now().toISOString())
      })

      it('accepts the Variant B spelling (fullName, title, description) and stores it', async () => {
        const { user, accessToken } = await createUser(ctx)
        const response = await request(ctx.app, {
          method,
          url: '/users/me',
          token: accessToken,
          payload: { fullName: 'Alan Turing', title: 'Mathematician', description: 'Computable numbers' },
        })
        expect(response.statusCode).toBe(200)
        expect(response.json().data).toMatchObject({ fullName: 'Alan Turing', title: 'Mathematician', description: 'Computable numbers', phone: null })
        expect(response.json().data).not.toHaveProperty('passwordHash')
        expect(await rowOf(user.id)).toMatchObject({ fullName: 'Alan Turing', title: 'Mathematician', description: 'Computable numbers', phone: null })
      })

      it('changes only the fields sent', async () => {
        const { user, accessToken } = await createUser(ctx)
        await request(ctx.app, {
          method,
          url: '/users/me',
          token: accessToken,
          payload: { fullName: 'Katherine Johnson', title: 'Engineer', description: 'Orbits', phone: '+1 555 0100' },
        })
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { title: 'Physicist' } })
        expect(response.statusCode).toBe(200)
        expect(response.json().data).toMatchObject({ fullName: 'Katherine Johnson', title: 'Physicist', description: 'Orbits', phone: '+1 555 0100' })
        const row = await rowOf(user.id)
        expect(row).toMatchObject({
          fullName: 'Katherine Johnson',
          title: 'Physicist',
          description: 'Orbits',
          phone: '+1 555 0100',
          email: user.email,
          username: user.username,
          isActive: true,
          isStaff: false,
        })
      })

      it('refuses an empty body (400 on body) and changes nothing', async () => {
        const { user, accessToken } = await createUser(ctx, { fullName: 'Unchanged Person' })
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: {} })
        expectError(response, 400, 'VALIDATION_ERROR', ['body'])
        expect(await rowOf(user.id)).toMatchObject({ fullName: 'Unchanged Person', title: null, description: null, phone: null })
      })

      it('clears title, description and phone when they are sent as null', async () => {
        const { user, accessToken } = await createUser(ctx)
        await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { title: 'T', description: 'D', phone: '+1 555 0101' } })
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { title: null, description: null, phone: null } })
        expect(response.statusCode).toBe(200)
        expect(response.json().data).toMatchObject({ title: null, description: null, phone: null })
        expect(await rowOf(user.id)).toMatchObject({ title: null, description: null, phone: null })
      })

      it('clears the description when bio is sent as null', async () => {
        const { user, accessToken } = await createUser(ctx)
        await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { bio: 'Something' } })
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { bio: null } })
        expect(response.statusCode).toBe(200)
        expect(response.json().data.description).toBeNull()
        expect((await rowOf(user.id)).description).toBeNull()
      })

      it('prefers the Variant B spelling when both spellings are sent', async () => {
        const { user, accessToken } = await createUser(ctx)
        const response = await request(ctx.app, {
          method,
          url: '/users/me',
          token: accessToken,
          payload: { name: 'Variant A', fullName: 'Variant B', bio: 'bio text', description: 'description text' },
        })
        expect(response.statusCode).toBe(200)
        expect(response.json().data).toMatchObject({ fullName: 'Variant B', description: 'description text' })
        expect(await rowOf(user.id)).toMatchObject({ fullName: 'Variant B', description: 'description text' })
      })

      it('accepts a title of 100 and a description of 1000 characters', async () => {
        const { user, accessToken } = await createUser(ctx)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { title: 't'.repeat(100), description: 'd'.repeat(1000) } })
        expect(response.statusCode).toBe(200)
        expect(await rowOf(user.id)).toMatchObject({ title: 't'.repeat(100), description: 'd'.repeat(1000) })
      })

      it.each([
        ['title', { title: 't'.repeat(101) }],
        ['description', { description: 'd'.repeat(1001) }],
        ['bio', { bio: 'b'.repeat(1001) }],
        ['fullName', { fullName: 'A' }],
        ['name', { name: 'A' }],
        ['fullName', { fullName: 'F'.repeat(101) }],
        ['fullName', { fullName: '   ' }],
        ['phone', { phone: 'call me maybe' }],
        ['phone', { phone: '12' }],
      ])('refuses a bad %s (400 on that field) and leaves the account unchanged', async (field, payload) => {
        const { user, accessToken } = await createUser(ctx)
        const before = await rowOf(user.id)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload })
        expectError(response, 400, 'VALIDATION_ERROR', [field])
        expect(await rowOf(user.id)).toEqual(before)
      })

      it('refuses a full name that is a single character once trimmed (400 on fullName)', async () => {
        const { user, accessToken } = await createUser(ctx)
        const before = await rowOf(user.id)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { fullName: ' A ' } })
        expectError(response, 400, 'VALIDATION_ERROR', ['fullName'])
        expect(await rowOf(user.id)).toEqual(before)
      })

      it.each([
        ['title', { title: 5 }],
        ['description', { description: true }],
        ['bio', { bio: ['x'] }],
        ['fullName', { fullName: 42 }],
        ['fullName', { fullName: null }],
        ['phone', { phone: 5550100 }],
        ['username', { username: 7 }],
      ])('refuses a wrong type for %s (400 on that field)', async (field, payload) => {
        const { user, accessToken } = await createUser(ctx)
        const before = await rowOf(user.id)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload })
        expectError(response, 400, 'VALIDATION_ERROR', [field])
        expect(await rowOf(user.id)).toEqual(before)
      })

      it('names every bad field at once and applies none of the valid ones', async () => {
        const { user, accessToken } = await createUser(ctx)
        const before = await rowOf(user.id)
        const response = await request(ctx.app, {
          method,
          url: '/users/me',
          token: accessToken,
          payload: { fullName: 'Valid Name', title: 't'.repeat(101), phone: 'nope' },
        })
        expectError(response, 400, 'VALIDATION_ERROR', ['phone', 'title'])
        expect(await rowOf(user.id)).toEqual(before)
      })

      it.each([
        ['isStaff', true],
        ['isActive', false],
        ['isSuperuser', true],
        ['email', 'someone.else@example.test'],
        ['passwordHash', '$argon2id$v=19$m=19456,t=2,p=1$AAAA$BBBB'],
        ['isKYCVerified', true],
        ['notes', 'self-written note'],
        ['tokenVersion', 0],
        ['role', 'admin'],
        ['permissions', ['view_users']],
      ])('refuses %s in the profile update (400 on that field) and leaves the account unchanged', async (field, value) => {
        const { user, accessToken } = await createUser(ctx)
        const before = await rowOf(user.id)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { title: 'Sneaky', [field]: value } })
        expectError(response, 400, 'VALIDATION_ERROR', [field])
        expect(await rowOf(user.id)).toEqual(before)
        const me = await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken })
        expect(me.json().data).toMatchObject({ isStaff: false, isSuperuser: false, isActive: true, role: 'client', permissions: [], title: null })
      })

      it('refuses a username change (400 on username) and keeps the old username', async () => {
        const { user, accessToken } = await createUser(ctx)
        const before = await rowOf(user.id)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { username: unique('new').slice(0, 20), title: 'Changed' } })
        expectError(response, 400, 'VALIDATION_ERROR', ['username'])
        expect(await rowOf(user.id)).toEqual(before)
      })

      it("refuses taking another user's username (400 on username)", async () => {
        const other = await createUser(ctx)
        const { user, accessToken } = await createUser(ctx)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { username: other.user.username } })
        expectError(response, 400, 'VALIDATION_ERROR', ['username'])
        expect((await rowOf(user.id)).username).toBe(user.username)
      })

      it('accepts the unchanged username alongside other changes (200)', async () => {
        const { user, accessToken } = await createUser(ctx)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, payload: { username: user.username, title: 'Same name' } })
        expect(response.statusCode).toBe(200)
        expect(response.json().data).toMatchObject({ username: user.username, title: 'Same name' })
        expect(await rowOf(user.id)).toMatchObject({ username: user.username, title: 'Same name' })
      })

      it('refuses a body that is not JSON (400 on body)', async () => {
        const { accessToken } = await createUser(ctx)
        const response = await request(ctx.app, { method, url: '/users/me', token: accessToken, headers: { 'content-type': 'application/json' }, payload: '{"title":' })
        expectError(response, 400, 'VALIDATION_ERROR', ['body'])
      })

      it('refuses a request without a token (401 UNAUTHENTICATED)', async () => {
        expectError(await request(ctx.app, { method, url: '/users/me', payload: { title: 'x' } }), 401, 'UNAUTHENTICATED')
      })
    })
  })

  describe('GET /users', () => {
    let viewer: string
    let superuser: string

    beforeAll(async () => {
      viewer = (await createUser(ctx, { permissions: ['view_users'] })).accessToken
      superuser = (await createSuperuser(ctx)).accessToken
    })

    const list = (token: string | undefined, query = '') => request(ctx.app, { method: 'GET', url: `/users${query}`, token })

    it('refuses a request without a token (401 UNAUTHENTICATED)', async () => {
      expectError(await list(undefined), 401, 'UNAUTHENTICATED')
    })

    it('refuses a client (403 FORBIDDEN)', async () => {
      const { accessToken } = await createUser(ctx)
      expectError(await list(accessToken), 403, 'FORBIDDEN')
    })

    it('refuses a client who holds a role with view_users (403 FORBIDDEN)', async () => {
      const { accessToken } = await createUser(ctx, { isStaff: false, permissions: ['view_users'] })
      expectError(await list(accessToken), 403, 'FORBIDDEN')
    })

    it('refuses staff without roles (403 FORBIDDEN)', async () => {
      const { accessToken } = await createUser(ctx, { isStaff: true })
      expectError(await list(accessToken), 403, 'FORBIDDEN')
    })

    it('refuses staff whose roles lack view_users (403 FORBIDDEN)', async () => {
      const others = permissions.filter((value) => value !== 'view_users') as Permission[]
      const { accessToken } = await createUser(ctx, { permissions: others })
      expectError(await list(accessToken), 403, 'FORBIDDEN')
    })

    it('lists users for staff with view_users, in the paging envelope with default page 1 and limit 20', async () => {
      const response = await list(viewer)
      expect(response.statusCode).toBe(200)
      const body = response.json()
      expect(body.success).toBe(true)
      expect(Object.keys(body.data).sort()).toEqual(['items', 'pagination'])
      expect(Object.keys(body.data.pagination).sort()).toEqual(['hasNext', 'hasPrev', 'limit', 'page', 'pages', 'total'])
      const total = await ctx.database.db.$count(users)
      expect(body.data.pagination).toEqual({
        page: 1,
        limit: 20,
        total,
        pages: Math.ceil(total / 20),
        hasNext: total > 20,
        hasPrev: false,
      })
      expect(body.data.items).toHaveLength(Math.min(total, 20))
    })

    it('lists users for a superuser', async () => {
      const response = await list(superuser)
      expect(response.statusCode).toBe(200)
      expect(response.json().data.items.length).toBeGreaterThan(0)
    })

    it('gives each item the user fields plus servicesCount 0, and never the password hash', async () => {
      const response = await list(superuser, '?limit=100')
      expect(response.statusCode).toBe(200)
      const items = response.json().data.items as Record<string, unknown>[]
      expect(items.length).toBeGreaterThan(0)
      for (const item of items) {
        expectUserShape(item, ['servicesCount'])
        expect(item.servicesCount).toBe(0)
      }
      expect(response.body).not.toMatch(/passwordHash|password_hash|tokenVersion|notes/)
    })

    it('pages through a search result with page and limit', async () => {
      const marker = unique('pg')
      const created: string[] = []
      for (let index = 0; index < 5; index++) {
        created.push((await createUser(ctx, { fullName: `Pager ${marker} ${index}` })).user.id)
      }
      const seen: string[] = []
      const expectations = [
        { page: 1, count: 2, hasNext: true, hasPrev: false },
        { page: 2, count: 2, hasNext: true, hasPrev: true },
        { page: 3, count: 1, hasNext: false, hasPrev: true },
        { page: 4, count: 0, hasNext: false, hasPrev: true },
      ]
      for (const { page, count, hasNext, hasPrev } of expectations) {
        const response = await list(viewer, `?search=${marker}&limit=2&page=${page}`)
        expect(response.statusCode).toBe(200)
        const data = response.json().data
        expect(data.pagination).toEqual({ page, limit: 2, total: 5, pages: 3, hasNext, hasPrev })
        expect(data.items).toHaveLength(count)
        seen.push(...data.items.map((item: { id: string }) => item.id))
      }
      expect(seen).toHaveLength(5)
      expect([...seen].sort()).toEqual([...created].sort())
    })

    it('accepts limit=100 and refuses limit=101 or limit=0 (400 on limit)', async () => {
      const largest = await list(viewer, '?limit=100')
      expect(largest.statusCode).toBe(200)
      expect(largest.json().data.pagination.limit).toBe(100)
      expectError(await list(viewer, '?limit=101'), 400, 'VALIDATION_ERROR', ['limit'])
      expectError(await list(viewer, '?limit=0'), 400, 'VALIDATION_ERROR', ['limit'])
      expectError(await list(viewer, '?limit=ten'), 400, 'VALIDATION_ERROR', ['limit'])
    })

    it.each(['0', '-1', '1.5', 'first'])('refuses page=%s (400 on page)', async (page) => {
      expectError(await list(viewer, `?page=${page}`), 400, 'VALIDATION_ERROR', ['page'])
    })

    it('refuses sortBy, which is not a parameter (400 on sortBy)', async () => {
      expectError(await list(viewer, '?sortBy=email'), 400, 'VALIDATION_ERROR', ['sortBy'])
    })

    describe('search', () => {
      const emailMarker = unique('em')
      const usernameMarker = unique('un')
      const nameMarker = unique('fn')
      let byEmail: string
      let byUsername: string
      let byName: string

      beforeAll(async () => {
        byEmail = (await createUser(ctx, { email: `${emailMarker}@example.test` })).user.id
        byUsername = (await createUser(ctx, { username: usernameMarker.slice(0, 20) })).user.id
        byName = (await createUser(ctx, { fullName: `Zelda ${nameMarker} Quintero` })).user.id
      })

      const idsFor = async (search: string): Promise<string[]> => {
        const response = await list(viewer, `?limit=100&search=${encodeURIComponent(search)}`)
        expect(response.statusCode).toBe(200)
        return response.json().data.items.map((item: { id: string }) => item.id)
      }

      it('matches the e-mail, case-insensitively', async () => {
        expect(await idsFor(emailMarker.toUpperCase())).toEqual([byEmail])
        expect(await idsFor(emailMarker)).toEqual([byEmail])
      })

      it('matches the username, case-insensitively', async () => {
        expect(await idsFor(usernameMarker.slice(0, 20).toUpperCase())).toEqual([byUsername])
      })

      it('matches the full name, case-insensitively and by a fragment', async () => {
        expect(await idsFor(`zelda ${nameMarker.toUpperCase()} QUIN`)).toEqual([byName])
      })

      it('returns an empty page when nothing matches', async () => {
        const response = await list(viewer, `?search=${unique('nothing')}`)
        expect(response.statusCode).toBe(200)
        expect(response.json().data).toEqual({ items: [], pagination: { page: 1, limit: 20, total: 0, pages: 0, hasNext: false, hasPrev: false } })
      })

      it('treats % as a literal character, not a wildcard', async () => {
        const marker = unique('pc')
        const literal = (await createUser(ctx, { fullName: `Promo 100% ${marker}` })).user.id
        await createUser(ctx, { fullName: `Promo 100x ${marker}` })
        expect(await idsFor(`100% ${marker}`)).toEqual([literal])

        const response = await list(viewer, '?limit=100&search=%25')
        expect(response.statusCode).toBe(200)
        const { items, pagination } = response.json().data
        expect(pagination.total).toBeLessThan(await ctx.database.db.$count(users))
        expect(items.map((item: { id: string }) => item.id)).toContain(literal)
        for (const item of items) expect(`${item.email} ${item.username} ${item.fullName}`).toContain('%')
      })

      it('treats _ as a literal character, not a single-character wildcard', async () => {
        const marker = unique('us')
        const literal = (await createUser(ctx, { fullName: `Under_${marker}` })).user.id
        await createUser(ctx, { fullName: `UnderX${marker}` })
        expect(await idsFor(`r_${marker}`)).toEqual([literal])
      })

      it('treats a backslash as a literal character', async () => {
        const marker = unique('bs')
        const literal = (await createUser(ctx, { fullName: `Back\\slash ${marker}` })).user.id
        await createUser(ctx, { fullName: `Backslash ${marker}` })
        expect(await idsFor(`k\\s`)).toEqual([literal])
      })
    })

    describe('isActive filter', () => {
      const marker = unique('ac')
      let active: string
      let inactive: string

      beforeAll(async () => {
        active = (await createUser(ctx, { fullName: `Active ${marker}` })).user.id
        inactive = (await createUser(ctx, { fullName: `Dormant ${marker}`, isActive: false })).user.id
      })

      it('without the filter lists active and inactive users', async () => {
        const response = await list(viewer, `?search=${marker}`)
        expect(response.statusCode).toBe(200)
        expect(response.json().data.items.map((item: { id: string }) => item.id).sort()).toEqual([active, inactive].sort())
      })

      it('isActive=true lists only active users', async () => {
        const response = await list(viewer, `?search=${marker}&isActive=true`)
        expect(response.statusCode).toBe(200)
        expect(response.json().data.items).toEqual([expect.objectContaining({ id: active, isActive: true })])
        const all = await list(viewer, '?isActive=true&limit=100')
        for (const item of all.json().data.items) expect(item.isActive).toBe(true)
      })

      it('isActive=false lists only inactive users', async () => {
        const response = await list(viewer, `?search=${marker}&isActive=false`)
        expect(response.statusCode).toBe(200)
        expect(response.json().data.items).toEqual([expect.objectContaining({ id: inactive, isActive: false })])
        expect(response.json().data.pagination.total).toBe(1)
      })

      it('refuses a value that is not a boolean (400 on isActive)', async () => {
        expectError(await list(viewer, '?isActive=maybe'), 400, 'VALIDATION_ERROR', ['isActive'])
      })
    })
  })
})
