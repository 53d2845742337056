import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSuperuser, createUser, unique } from '../../../test/factories/users.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { users } from '../users/users.table.ts'

const PASSWORD = 'Sup3r-secret'

describe('the first superuser (AdminService.ensureFirstSuperuser)', () => {
  const login = (ctx: TestContext, email: string, password: string) => request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email, password } })
  const superusers = (ctx: TestContext) => ctx.database.db.select().from(users).where(eq(users.isSuperuser, true))
  const rowByEmail = async (ctx: TestContext, email: string) => (await ctx.database.db.select().from(users).where(eq(users.email, email)))[0]
  const newEmail = () => `${unique('root')}@example.test`

  describe('on a database without a superuser', () => {
    let ctx: TestContext
    beforeAll(async () => {
      ctx = await createTestApp()
    })
    afterAll(() => ctx.close())

    it('refuses an e-mail registered to an account that is no superuser (400 on email), and neither promotes nor changes it', async () => {
      const client = await createUser(ctx)
      const before = await rowByEmail(ctx, client.user.email)
      await expect(ctx.app.container.admin.ensureFirstSuperuser({ email: client.user.email, password: PASSWORD })).rejects.toMatchObject({
        statusCode: 400,
        code: 'VALIDATION_ERROR',
        details: [{ field: 'email', message: 'is already registered' }],
      })
      expect(await rowByEmail(ctx, client.user.email)).toEqual(before)
      expect(await superusers(ctx)).toEqual([])
    })

    it('creates one active superuser of two asked for at once, who logs in to the API', async () => {
      const [first, second] = [newEmail(), newEmail()]
      const results = await Promise.all([
        ctx.app.container.admin.ensureFirstSuperuser({ email: ` ${first.toUpperCase()} `, password: PASSWORD, fullName: ' Site Admin ' }),
        ctx.app.container.admin.ensureFirstSuperuser({ email: second, password: PASSWORD }),
      ])
      const created = results.filter((result) => result !== undefined)
      expect(created).toHaveLength(1)
      const rows = await superusers(ctx)
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ id: created[0]!.id, isActive: true, isStaff: true, isSuperuser: true })
      expect(rows[0]!.activatedAt).not.toBeNull()
      expect(rows[0]!.passwordHash).not.toContain(PASSWORD)

      const response = await login(ctx, rows[0]!.email, PASSWORD)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data.user).toMatchObject({ id: rows[0]!.id, role: 'admin', isSuperuser: true })
      if (rows[0]!.email === first) expect(rows[0]!.fullName).toBe('Site Admin')
      else expect(rows[0]!.fullName).toBe('Administrator')
    })

    it('creates nothing and changes nothing when asked again with other values', async () => {
      const [before] = await superusers(ctx)
      const other = newEmail()
      expect(await ctx.app.container.admin.ensureFirstSuperuser({ email: other, password: 'An0ther-secret', fullName: 'Someone Else' })).toBeUndefined()
      expect(await superusers(ctx)).toEqual([before])
      expect(await rowByEmail(ctx, other)).toBeUndefined()
      // Not even the same e-mail with a new password changes the account.
      expect(await ctx.app.container.admin.ensureFirstSuperuser({ email: before!.email, password: 'An0ther-secret' })).toBeUndefined()
      expect(await superusers(ctx)).toEqual([before])
      expect((await login(ctx, before!.email, 'An0ther-secret')).statusCode).toBe(401)
    })
  })

  describe('on a database with a superuser made otherwise', () => {
    let ctx: TestContext
    beforeAll(async () => {
      ctx = await createTestApp()
    })
    afterAll(() => ctx.close())

    it('creates nothing, also when that superuser is deactivated', async () => {
      const existing = await createSuperuser(ctx)
      await ctx.database.db.update(users).set({ isActive: false }).where(eq(users.id, existing.user.id))
      const email = newEmail()
      expect(await ctx.app.container.admin.ensureFirstSuperuser({ email, password: PASSWORD })).toBeUndefined()
      expect((await superusers(ctx)).map((row) => row.id)).toEqual([existing.user.id])
      expect(await rowByEmail(ctx, email)).toBeUndefined()
    })
  })
})
