import { randomBytes } from 'node:crypto'
import { and, eq, sql } from 'drizzle-orm'
import type { LightMyRequestResponse } from 'fastify'
import { SignJWT, decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createSuperuser, createUser, unique } from '../../../test/factories/users.ts'
import { createTestApp, expectError, fieldsOf, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY, HOUR, MINUTE, SECOND } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { users } from '../users/users.table.ts'
import { MAIL_JOBS } from './auth-mail-jobs.ts'
import { refreshTokens, revokedTokens, tokenFamilies } from './auth.table.ts'

const PASSWORD = 'Secret123'
const NEW_PASSWORD = 'Fresh4Start'
const USERNAME = /^[a-z0-9_]{3,20}$/

describe('auth routes', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(async () => {
    // The harness drops the PostgreSQL database while pool clients may still be closing; their
    // "terminating connection due to administrator command" (57P01) is not a failure of these tests.
    if (ctx.database.kind === 'postgres') {
      ctx.database.pool.on('error', (error: Error & { code?: string }) => {
        if (error.code !== '57P01') throw error
      })
    }
    await ctx.close()
  })

  const newEmail = (): string => `${unique('auth')}@example.test`

  const post = (url: string, payload?: object, token?: string): Promise<LightMyRequestResponse> =>
    request(ctx.app, { method: 'POST', url, ...(payload !== undefined && { payload }), token })

  const me = (token: string): Promise<LightMyRequestResponse> => request(ctx.app, { method: 'GET', url: '/users/me', token })

  const findUser = (email: string) => ctx.app.container.users.findAccountByEmail(ctx.database.db, email)

  const mailsTo = (email: string) => ctx.mailer.sent.filter((message) => message.to === email)

  /** Delivers every queued e-mail and returns the token in the newest one to `email`. */
  async function tokenMailedTo(email: string): Promise<string> {
    await ctx.app.container.worker.drain()
    return ctx.mailer.tokenTo(email)
  }

  async function superuserActor() {
    const admin = await createSuperuser(ctx)
    return (await ctx.app.container.auth.authenticate(admin.accessToken)).actor
  }

  function expectValidationError(response: LightMyRequestResponse, fields: string[]): void {
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } })
    expect(fieldsOf(response)).toEqual(fields)
  }

  function expectUnauthenticated(response: LightMyRequestResponse): void {
    expect(response.statusCode).toBe(401)
    expect(response.json()).toMatchObject({ success: false, error: { code: 'UNAUTHENTICATED' } })
  }

  /** Registers through the API; the account is inactive and its activation mail is queued. */
  async function register(overrides: Record<string, unknown> = {}) {
    const body = { email: newEmail(), password: PASSWORD, fullName: 'Ana Gómez', ...overrides }
    const response = await post('/auth/register', body)
    expect(response.statusCode).toBe(201)
    const user = response.json().data as { id: string; email: string; username: string }
    return { ...user, password: PASSWORD }
  }

  /** Registers and activates through the API, as a user following the e-mail link does. */
  async function registerActive() {
    const user = await register()
    expect((await post('/auth/activate', { token: await tokenMailedTo(user.email) })).statusCode).toBe(200)
    return user
  }

  const login = (email: string, password: string) => post('/auth/login', { email, password })

  const refresh = (refreshToken: string) => post('/auth/refresh', { refreshToken })

  const familyOf = (token: string): string => decodeJwt(token).fam as string

  const familyRow = async (familyId: string) => (await ctx.database.db.select().from(tokenFamilies).where(eq(tokenFamilies.id, familyId)))[0]

  const refreshTokenRows = (familyId: string) => ctx.database.db.select().from(refreshTokens).where(eq(refreshTokens.familyId, familyId))

  /** The outbox jobs of `topic` whose payload names `email`. */
  const mailJobsFor = (topic: string, email: string) =>
    ctx.database.db.select().from(outboxJobs).where(and(eq(outboxJobs.topic, topic), sql`${outboxJobs.payload}->>'email' = ${email}`))

  /** Runs `send` while watching every way the auth service can look an account up. */
  async function accountLookupsDuring(send: () => Promise<void>): Promise<number> {
    const { users: accounts } = ctx.app.container
    const spies = [vi.spyOn(accounts, 'findAccountByEmail'), vi.spyOn(accounts, 'findAccountById'), vi.spyOn(accounts, 'lockAccount')]
    try {
      await send()
      return spies.reduce((total, spy) => total + spy.mock.calls.length, 0)
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
  }

  /**
   * Runs `start` while another session holds a lock that lets transactions read `users` but not
   * insert into it, and lets go once `waiters` sessions wait for a lock: every request has then run
   * its duplicate checks before any of them wrote, the worst interleaving of concurrent requests.
   * PGlite has a single connection, so there the requests simply run one after another.
   */
  const withUserInsertsHeldBack = <T>(waiters: number, start: () => Promise<T>): Promise<T> =>
    withLockHeld('lock table users in share row exclusive mode', [], waiters, start)

  /** Runs `start` while another session holds the lock `statement` takes, until `waiters` sessions wait for a lock. */
  async function withLockHeld<T>(statement: string, params: unknown[], waiters: number, start: () => Promise<T>): Promise<T> {
    if (ctx.database.kind !== 'postgres') return start()
    const client = await ctx.database.pool.connect()
    try {
      await client.query('begin')
      await client.query(statement, params)
      const pending = start()
      for (let waiting = 0, polls = 0; waiting < waiters; polls++) {
        if (polls > 50_000) throw new Error(`only ${waiting} of ${waiters} requests came to wait for a lock`)
        // Sessions, not pg_locks rows: a wait for a row lock is on a transaction id, which names no
        // database. Asked outside the lock holder's transaction, which would see one frozen snapshot.
        const result = await ctx.database.pool.query<{ waiting: number }>(
          "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        )
        waiting = result.rows[0]!.waiting
      }
      await client.query('commit')
      return await pending
    } finally {
      await client.query('rollback')
      client.release()
    }
  }

  describe('POST /auth/register', () => {
    it('creates an inactive account and answers 201 with the user: no password hash, e-mail trimmed and lowercased', async () => {
      const local = unique('Maria.')
      const response = await post('/auth/register', { email: `  ${local}@Example.TEST `, password: PASSWORD, fullName: '  María López ' })

      expect(response.statusCode).toBe(201)
      const body = response.json()
      const email = `${local.toLowerCase()}@example.test`
      expect(body).toMatchObject({
        success: true,
        data: {
          email,
          fullName: 'María López',
          isActive: false,
          isStaff: false,
          isSuperuser: false,
          isKYCVerified: false,
          role: 'client',
          lastLogin: null,
        },
      })
      expect(body.data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      expect(body.data.username).toMatch(USERNAME)
      for (const secret of ['passwordHash', 'password', 'notes', 'accessToken', 'refreshToken', 'tokenVersion', 'activatedAt']) {
        expect(body.data).not.toHaveProperty(secret)
      }
      expect(response.body).not.toContain(PASSWORD)

      const row = await findUser(email)
      expect(row).toMatchObject({ id: body.data.id, isActive: false, activatedAt: null, lastLogin: null, fullName: 'María López' })
      expect(row?.passwordHash).toMatch(/^\$argon2id\$/)
      expect(response.body).not.toContain(row?.passwordHash)
    })

    it('accepts the display name as `name` (Variant A)', async () => {
      const email = newEmail()
      const response = await post('/auth/register', { email, password: PASSWORD, name: 'Variant Alpha' })
      expect(response.statusCode).toBe(201)
      expect(response.json().data).toMatchObject({ email, fullName: 'Variant Alpha', isActive: false })
      expect((await findUser(email))?.fullName).toBe('Variant Alpha')
    })

    it('accepts the display name as `fullName` (Variant B)', async () => {
      const email = newEmail()
      const response = await post('/auth/register', { email, password: PASSWORD, fullName: 'Variant Bravo' })
      expect(response.statusCode).toBe(201)
      expect(response.json().data).toMatchObject({ email, fullName: 'Variant Bravo', isActive: false })
      expect((await findUser(email))?.fullName).toBe('Variant Bravo')
    })

    it('refuses a body with neither `name` nor `fullName` (400 on fullName) and creates nothing', async () => {
      const email = newEmail()
      expectValidationError(await post('/auth/register', { email, password: PASSWORD }), ['fullName'])
      expect(await findUser(email)).toBeUndefined()
    })

    it.each([
      ['an e-mail without @', { email: 'plainaddress.example.test' }, 'email'],
      ['an e-mail with two @', { email: 'two@@example.test' }, 'email'],
      ['an e-mail without a dot in the domain', { email: 'nodot@example' }, 'email'],
      ['an e-mail with a space inside', { email: 'spa ce@example.test' }, 'email'],
      ['an empty e-mail', { email: '' }, 'email'],
      ['an e-mail longer than 254 characters', { email: `${'a'.repeat(64)}@${'b'.repeat(186)}.test` }, 'email'],
      ['a password of 7 characters', { password: 'Secre12' }, 'password'],
      ['a password without an uppercase letter', { password: 'secret123' }, 'password'],
      ['a password without a lowercase letter', { password: 'SECRET123' }, 'password'],
      ['a password without a digit', { password: 'SecretSecret' }, 'password'],
      ['a fullName of 1 character', { fullName: 'A' }, 'fullName'],
      ['a fullName of 101 characters', { fullName: 'A'.repeat(101) }, 'fullName'],
      ['a fullName of spaces only', { fullName: '     ' }, 'fullName'],
      ['a fullName that is 1 character once trimmed', { fullName: '  A  ' }, 'fullName'],
      ['a username of 2 characters', { username: 'ab' }, 'username'],
      ['a username of 21 characters', { username: 'a'.repeat(21) }, 'username'],
      ['a username with uppercase letters', { username: 'Ana_Gomez' }, 'username'],
      ['a username with a hyphen', { username: 'ana-gomez' }, 'username'],
      ['a username with a space', { username: 'ana gomez' }, 'username'],
    ])('refuses %s (400 on the field) and creates nothing', async (_label, overrides, field) => {
      const email = newEmail()
      const response = await post('/auth/register', { email, password: PASSWORD, fullName: 'Ana Gómez', ...overrides })
      expectValidationError(response, [field])
      expect(await findUser(email)).toBeUndefined()
    })

    it.each([
      ['a password of exactly 8 characters', { password: 'Abcdef12' }],
      ['a fullName of exactly 2 characters', { fullName: 'Al' }],
      ['a fullName of exactly 100 characters', { fullName: 'B'.repeat(100) }],
      ['a username of exactly 3 characters', { username: 'q7_' }],
      ['a username of exactly 20 characters', { username: 'z'.repeat(20) }],
    ])('accepts %s', async (_label, overrides) => {
      const email = newEmail()
      const response = await post('/auth/register', { email, password: PASSWORD, fullName: 'Ana Gómez', ...overrides })
      expect(response.statusCode).toBe(201)
      expect(await findUser(email)).toBeDefined()
    })

    it('names every broken field at once', async () => {
      const response = await post('/auth/register', { email: 'nope', password: 'short', fullName: 'A', username: 'X' })
      expectValidationError(response, ['email', 'fullName', 'password', 'username'])
    })

    it('refuses an e-mail that is already registered, also in another case (400 on email)', async () => {
      const first = await register()
      expectValidationError(await post('/auth/register', { email: first.email, password: PASSWORD, fullName: 'Someone Else' }), ['email'])
      expectValidationError(
        await post('/auth/register', { email: `  ${first.email.toUpperCase()} `, password: PASSWORD, fullName: 'Someone Else' }),
        ['email'],
      )
      const rows = await ctx.database.db.select({ id: users.id }).from(users).where(eq(users.email, first.email))
      expect(rows).toEqual([{ id: first.id }])
    })

    it('refuses a username that is already taken (400 on username)', async () => {
      const username = unique('taken').slice(0, 20)
      await register({ username })
      const email = newEmail()
      expectValidationError(await post('/auth/register', { email, password: PASSWORD, fullName: 'Someone Else', username }), ['username'])
      expect(await findUser(email)).toBeUndefined()
    })

    it('names both the e-mail and the username when both are taken', async () => {
      const username = unique('both').slice(0, 20)
      const first = await register({ username })
      expectValidationError(await post('/auth/register', { email: first.email, password: PASSWORD, fullName: 'Someone Else', username }), [
        'email',
        'username',
      ])
    })

    it('answers simultaneous registrations of one e-mail with one 201 and 400 on email for the others', async () => {
      const email = newEmail()
      const responses = await withUserInsertsHeldBack(3, () =>
        Promise.all([0, 1, 2].map(() => post('/auth/register', { email, password: PASSWORD, fullName: `Racer ${unique()}` }))),
      )
      expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 400, 400])
      for (const response of responses.filter((candidate) => candidate.statusCode === 400)) expectValidationError(response, ['email'])
      const rows = await ctx.database.db.select({ id: users.id }).from(users).where(eq(users.email, email))
      expect(rows).toEqual([{ id: responses.find((response) => response.statusCode === 201)!.json().data.id }])
    })

    it('gives each of several simultaneous registrations with the same full name and no username its own username (201 each)', async () => {
      const fullName = `Twin ${unique('t')}`
      const responses = await withUserInsertsHeldBack(3, () =>
        Promise.all([0, 1, 2].map(() => post('/auth/register', { email: newEmail(), password: PASSWORD, fullName }))),
      )
      expect(responses.map((response) => [response.statusCode, response.json().error?.details])).toEqual([
        [201, undefined],
        [201, undefined],
        [201, undefined],
      ])
      const usernames = responses.map((response) => response.json().data.username as string)
      expect(new Set(usernames).size).toBe(3)
      for (const username of usernames) expect(username).toMatch(USERNAME)
    })

    it('keeps a username given at registration', async () => {
      const username = unique('own').slice(0, 20)
      const user = await register({ username })
      expect(user.username).toBe(username)
      expect((await findUser(user.email))?.username).toBe(username)
    })

    it('generates the username from the full name, and a different one for a second user of the same name', async () => {
      const first = await register({ fullName: 'José Álvarez' })
      expect(first.username).toBe('jose_alvarez')
      const second = await register({ fullName: 'José Álvarez' })
      expect(second.username).not.toBe(first.username)
      expect(second.username).toMatch(USERNAME)
      expect(second.username.startsWith('jose_alvarez')).toBe(true)
      expect((await findUser(second.email))?.username).toBe(second.username)
    })

    it('generates a valid username from a full name with no Latin letters', async () => {
      const first = await register({ fullName: '李小龙' })
      const second = await register({ fullName: '李小龙' })
      expect(first.username).toMatch(USERNAME)
      expect(second.username).toMatch(USERNAME)
      expect(second.username).not.toBe(first.username)
    })

    it.each(['isStaff', 'isActive', 'isSuperuser'])('refuses the unknown field %s (400 on it) and creates nothing', async (field) => {
      const email = newEmail()
      const response = await post('/auth/register', { email, password: PASSWORD, fullName: 'Ana Gómez', [field]: true })
      expectValidationError(response, [field])
      expect(await findUser(email)).toBeUndefined()
    })

    it.each([
      ['email', 123],
      ['password', 12345678],
      ['fullName', ['Ana', 'Gómez']],
      ['name', 42],
      ['username', 42],
    ])('refuses %s of the wrong type (400 on it)', async (field, value) => {
      const email = newEmail()
      const response = await post('/auth/register', { email, password: PASSWORD, fullName: 'Ana Gómez', [field]: value })
      expectValidationError(response, [field])
      expect(await findUser(email)).toBeUndefined()
    })

    it('refuses a request without a body, naming the required fields', async () => {
      const response = await post('/auth/register')
      expect(response.statusCode).toBe(400)
      expect(response.json().error.code).toBe('VALIDATION_ERROR')
      expect(fieldsOf(response)).toEqual(expect.arrayContaining(['email', 'password']))
    })

    it('refuses a body that is not JSON (400 on body)', async () => {
      const response = await request(ctx.app, { method: 'POST', url: '/auth/register', payload: '{"email":', headers: { 'content-type': 'application/json' } })
      expectValidationError(response, ['body'])
    })

    it('queues the activation e-mail in the outbox and the worker sends it with a text and an HTML body', async () => {
      await ctx.app.container.worker.drain()
      const user = await register({ fullName: 'Mail Reader' })

      const jobs = await ctx.database.db
        .select()
        .from(outboxJobs)
        .where(and(eq(outboxJobs.topic, MAIL_JOBS.activation.topic), sql`${outboxJobs.payload}->>'userId' = ${user.id}`))
      expect(jobs).toHaveLength(1)
      expect(jobs[0]).toMatchObject({ status: 'pending', payload: { userId: user.id } })
      expect(mailsTo(user.email)).toHaveLength(0)

      expect(await ctx.app.container.worker.drain()).toBe(1)
      const [mail] = mailsTo(user.email)
      expect(mailsTo(user.email)).toHaveLength(1)
      const link = ctx.mailer.linkTo(user.email)
      expect(link).toMatch(/^http:\/\/app\.test\/activate\?token=[\w.-]+$/)
      expect(mail?.subject).toBe('Activate your account')
      expect(mail?.text).toContain('Hello Mail Reader,')
      expect(mail?.text).toContain(link)
      expect(mail?.html).toContain(`href="${link}"`)
      expect(mail?.html).toMatch(/^<!doctype html>/)
      const [job] = await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.id, jobs[0]!.id))
      expect(job?.status).toBe('done')
    })
  })

  describe('POST /auth/activate', () => {
    it('activates the account named by the e-mailed token and answers with the active user', async () => {
      const user = await register()
      const response = await post('/auth/activate', { token: await tokenMailedTo(user.email) })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ success: true, data: { id: user.id, email: user.email, isActive: true } })
      expect(response.json().data).not.toHaveProperty('passwordHash')
      const row = await findUser(user.email)
      expect(row?.isActive).toBe(true)
      expect(row?.activatedAt).toEqual(ctx.clock.now())
      expect((await login(user.email, PASSWORD)).statusCode).toBe(200)
    })

    it('refuses a token used a second time (400 TOKEN_USED on token) without any account data, and changes nothing', async () => {
      const user = await register()
      const token = await tokenMailedTo(user.email)
      expect((await post('/auth/activate', { token })).statusCode).toBe(200)
      const before = await findUser(user.email)
      ctx.clock.advance(MINUTE)
      const again = await post('/auth/activate', { token })
      expectError(again, 400, 'TOKEN_USED', ['token'])
      expect(again.json().error.details).toEqual([{ field: 'token', message: expect.stringContaining('log in') }])
      expect(again.json()).not.toHaveProperty('data')
      for (const revealed of [user.id, user.email, user.username, 'isStaff', 'lastLogin', 'phone']) expect(again.body).not.toContain(revealed)
      expect((await findUser(user.email))?.activatedAt).toEqual(before?.activatedAt)
    })

    it('answers 400 TOKEN_USED to a valid activation token of an account that is already active', async () => {
      const account = await createUser(ctx)
      const response = await post('/auth/activate', { token: await ctx.app.container.auth.tokens.signActivation(account.user.id) })
      expectError(response, 400, 'TOKEN_USED', ['token'])
      expect(response.body).not.toContain(account.user.email)
    })

    it.each([
      ['a random string', 'garbage'],
      ['three dots-separated segments', 'a.b.c'],
      ['a JWT-shaped string with an empty signature', 'eyJhbGciOiJIUzI1NiJ9.e30.'],
    ])('refuses %s as a token (400 on token)', async (_label, token) => {
      expectValidationError(await post('/auth/activate', { token }), ['token'])
    })

    it('refuses an empty or missing token (400 on token)', async () => {
      expectValidationError(await post('/auth/activate', { token: '' }), ['token'])
      expectValidationError(await post('/auth/activate', {}), ['token'])
    })

    it.each(['access', 'refresh', 'reset'] as const)('refuses the %s token of the account as its activation token (400 on token) and leaves it inactive', async (kind) => {
      const account = await createUser(ctx, { isActive: false })
      const token =
        kind === 'access' ? account.accessToken : kind === 'refresh' ? account.refreshToken : await ctx.app.container.auth.tokens.signReset(account.user)
      expectValidationError(await post('/auth/activate', { token }), ['token'])
      expect((await findUser(account.user.email))?.isActive).toBe(false)
      // The real activation token of the same account still works: only the kind was wrong.
      expect((await post('/auth/activate', { token: await ctx.app.container.auth.tokens.signActivation(account.user.id) })).statusCode).toBe(200)
    })

    it('refuses a well-signed activation token that names no user (400 on token)', async () => {
      const token = await ctx.app.container.auth.tokens.signActivation(newId())
      expectValidationError(await post('/auth/activate', { token }), ['token'])
    })

    it('accepts an activation token just before 24 hours have passed', async () => {
      const user = await register()
      const token = await tokenMailedTo(user.email)
      ctx.clock.advance(DAY - SECOND)
      expect((await post('/auth/activate', { token })).statusCode).toBe(200)
      expect((await findUser(user.email))?.isActive).toBe(true)
    })

    it('refuses an activation token older than 24 hours with 400 TOKEN_EXPIRED naming the resend route, and leaves the account inactive', async () => {
      const user = await register()
      const token = await tokenMailedTo(user.email)
      ctx.clock.advance(DAY + SECOND)
      const response = await post('/auth/activate', { token })
      expectError(response, 400, 'TOKEN_EXPIRED', ['token'])
      expect(response.json().error.message).toContain('/api/v1/auth/activation/resend')
      expect(response.json()).not.toHaveProperty('data')
      expect(response.body).not.toContain(user.email)
      expect(await findUser(user.email)).toMatchObject({ isActive: false, activatedAt: null })
    })

    it('lets a late activator ask for a new link after TOKEN_EXPIRED; the new link activates the account', async () => {
      const user = await register()
      const expired = await tokenMailedTo(user.email)
      ctx.clock.advance(2 * DAY)
      expectError(await post('/auth/activate', { token: expired }), 400, 'TOKEN_EXPIRED', ['token'])
      expect((await post('/auth/activation/resend', { email: user.email })).statusCode).toBe(200)
      const fresh = await tokenMailedTo(user.email)
      expect(fresh).not.toBe(expired)
      expect((await post('/auth/activate', { token: fresh })).statusCode).toBe(200)
      expect((await login(user.email, PASSWORD)).statusCode).toBe(200)
    })

    it('answers an expired activation token of an account active since with 400 TOKEN_USED (log in), not TOKEN_EXPIRED', async () => {
      const user = await register()
      const token = await tokenMailedTo(user.email)
      expect((await post('/auth/activate', { token })).statusCode).toBe(200)
      ctx.clock.advance(DAY + SECOND)
      expectError(await post('/auth/activate', { token }), 400, 'TOKEN_USED', ['token'])
    })

    it('keeps answering an expired activation token of an account deactivated by staff as invalid (400 VALIDATION_ERROR on token)', async () => {
      const user = await register()
      const token = await tokenMailedTo(user.email)
      expect((await post('/auth/activate', { token })).statusCode).toBe(200)
      await ctx.app.container.admin.deactivateUser(await superuserActor(), user.id)
      ctx.clock.advance(DAY + SECOND)
      expectValidationError(await post('/auth/activate', { token }), ['token'])
    })

    it('answers an expired token that names no account, or that a foreign key signed, as invalid (400 VALIDATION_ERROR on token)', async () => {
      const user = await register()
      const orphan = await ctx.app.container.auth.tokens.signActivation(newId())
      const genuine = await tokenMailedTo(user.email)
      const forged = await new SignJWT(decodeJwt(genuine)).setProtectedHeader({ alg: 'HS256', typ: 'activation+jwt' }).sign(randomBytes(32))
      ctx.clock.advance(DAY + SECOND)
      for (const token of [orphan, forged]) expectValidationError(await post('/auth/activate', { token }), ['token'])
      expectError(await post('/auth/activate', { token: genuine }), 400, 'TOKEN_EXPIRED', ['token'])
    })

    it('does not let the old activation token undo a deactivation by staff (400 on token)', async () => {
      const user = await register()
      const token = await tokenMailedTo(user.email)
      expect((await post('/auth/activate', { token })).statusCode).toBe(200)
      await ctx.app.container.admin.deactivateUser(await superuserActor(), user.id)

      expectValidationError(await post('/auth/activate', { token }), ['token'])
      expect((await findUser(user.email))?.isActive).toBe(false)
      expectUnauthenticated(await login(user.email, PASSWORD))
    })

    it('does not reactivate an account switched off directly in the database after activation (400 on token)', async () => {
      const user = await register()
      const token = await tokenMailedTo(user.email)
      expect((await post('/auth/activate', { token })).statusCode).toBe(200)
      await ctx.database.db.update(users).set({ isActive: false }).where(eq(users.id, user.id))

      expectValidationError(await post('/auth/activate', { token }), ['token'])
      const row = await findUser(user.email)
      expect(row?.isActive).toBe(false)
      expect(row?.activatedAt).not.toBeNull()
    })
  })

  describe('POST /auth/activation/resend', () => {
    it('queues one job carrying only the normalised e-mail for a known and an unknown address alike, without looking the account up', async () => {
      const user = await register()
      await ctx.app.container.worker.drain()
      const unknown = newEmail()
      const lookups = await accountLookupsDuring(async () => {
        for (const email of [user.email, unknown]) {
          const response = await post('/auth/activation/resend', { email: ` ${email.toUpperCase()} ` })
          expect(response.json()).toEqual({ success: true, data: { email } })
        }
      })
      expect(lookups).toBe(0)
      for (const email of [user.email, unknown]) {
        const jobs = await mailJobsFor(MAIL_JOBS.activation.topic, email)
        expect(jobs.map((job) => job.payload)).toEqual([{ email }])
      }

      const sent = mailsTo(user.email).length
      await ctx.app.container.worker.drain()
      expect(mailsTo(user.email)).toHaveLength(sent + 1)
      expect(mailsTo(unknown)).toHaveLength(0)
      for (const email of [user.email, unknown]) expect((await mailJobsFor(MAIL_JOBS.activation.topic, email))[0]?.status).toBe('done')
    })

    it('mails a new working activation link to an account that was never activated', async () => {
      const user = await register()
      await ctx.app.container.worker.drain()
      expect(mailsTo(user.email)).toHaveLength(1)

      const response = await post('/auth/activation/resend', { email: `  ${user.email.toUpperCase()} ` })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { email: user.email } })
      await ctx.app.container.worker.drain()
      expect(mailsTo(user.email)).toHaveLength(2)
      const link = ctx.mailer.linkTo(user.email)
      expect(link.startsWith('http://app.test/activate?token=')).toBe(true)

      expect((await post('/auth/activate', { token: ctx.mailer.tokenTo(user.email) })).statusCode).toBe(200)
      expect((await findUser(user.email))?.isActive).toBe(true)
    })

    it('answers the same for an unknown e-mail and sends nothing', async () => {
      const email = newEmail()
      const response = await post('/auth/activation/resend', { email })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { email } })
      await ctx.app.container.worker.drain()
      expect(mailsTo(email)).toHaveLength(0)
    })

    it('answers the same for an activated account and sends nothing', async () => {
      const user = await registerActive()
      const sent = mailsTo(user.email).length
      const response = await post('/auth/activation/resend', { email: user.email })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { email: user.email } })
      await ctx.app.container.worker.drain()
      expect(mailsTo(user.email)).toHaveLength(sent)
    })

    it('sends nothing to an account deactivated by staff after activation', async () => {
      const user = await registerActive()
      await ctx.app.container.admin.deactivateUser(await superuserActor(), user.id)
      const sent = mailsTo(user.email).length
      expect((await post('/auth/activation/resend', { email: user.email })).statusCode).toBe(200)
      await ctx.app.container.worker.drain()
      expect(mailsTo(user.email)).toHaveLength(sent)
    })

    it('refuses a malformed or missing e-mail (400 on email)', async () => {
      expectValidationError(await post('/auth/activation/resend', { email: 'not-an-email' }), ['email'])
      expectValidationError(await post('/auth/activation/resend', {}), ['email'])
    })
  })

  describe('POST /auth/login', () => {
    it('answers 200 with an access token, a refresh token and the user, and records lastLogin', async () => {
      const user = await registerActive()
      expect((await findUser(user.email))?.lastLogin).toBeNull()
      ctx.clock.advance(MINUTE)

      const response = await login(user.email, PASSWORD)
      expect(response.statusCode).toBe(200)
      const { data } = response.json()
      expect(data).toMatchObject({
        accessToken: expect.any(String),
        refreshToken: expect.any(String),
        user: { id: user.id, email: user.email, name: 'Ana Gómez', fullName: 'Ana Gómez', role: 'client', isActive: true },
      })
      expect(data.user).not.toHaveProperty('passwordHash')
      expect(data.user.lastLogin).toBe(ctx.clock.now().toISOString())
      expect((await findUser(user.email))?.lastLogin).toEqual(ctx.clock.now())

      const profile = await me(data.accessToken)
      expect(profile.statusCode).toBe(200)
      expect(profile.json().data).toMatchObject({ id: user.id })
      expect((await post('/auth/refresh', { refreshToken: data.refreshToken })).statusCode).toBe(200)
    })

    it('finds the account whatever the case and surrounding spaces of the e-mail', async () => {
      const user = await registerActive()
      const response = await login(`  ${user.email.toUpperCase()}  `, PASSWORD)
      expect(response.statusCode).toBe(200)
      expect(response.json().data.user).toMatchObject({ id: user.id, email: user.email })
    })

    it.each([
      ['staff', { isStaff: true }],
      ['admin', { isStaff: true, isSuperuser: true }],
    ])('reports the role %s for staff and superusers', async (role, options) => {
      const account = await createUser(ctx, options)
      const response = await login(account.user.email, account.password)
      expect(response.statusCode).toBe(200)
      expect(response.json().data.user.role).toBe(role)
    })

    it('answers a wrong password, an unknown e-mail, an account deactivated by staff and a wrong password of an account never activated with the same 401 UNAUTHENTICATED', async () => {
      const active = await createUser(ctx)
      const waiting = await createUser(ctx, { isActive: false })
      const deactivated = await registerActive()
      await ctx.app.container.admin.deactivateUser(await superuserActor(), deactivated.id)

      const wrongPassword = await login(active.user.email, 'Wrong1234')
      const unknownEmail = await login(newEmail(), active.password)
      const deactivatedAccount = await login(deactivated.email, deactivated.password)
      const waitingWrongPassword = await login(waiting.user.email, 'Wrong1234')

      for (const response of [wrongPassword, unknownEmail, deactivatedAccount, waitingWrongPassword]) {
        expectUnauthenticated(response)
        expect(response.json().error.details).toEqual([])
        expect(response.json()).not.toHaveProperty('data')
        expect(response.json().error.message).toBe(wrongPassword.json().error.message)
      }
      for (const email of [active.user.email, waiting.user.email, deactivated.email]) expect((await findUser(email))?.lastLogin).toBeNull()
    })

    it('tells the owner of an account never activated, once the password is right, to activate it (401 ACCOUNT_NOT_ACTIVATED naming the resend route)', async () => {
      const user = await register()
      const response = await login(user.email, PASSWORD)
      expectError(response, 401, 'ACCOUNT_NOT_ACTIVATED')
      expect(response.json().error.message).toContain('/api/v1/auth/activation/resend')
      expect(response.json().error.details).toEqual([])
      expect(response.json()).not.toHaveProperty('data')
      expect(response.body).not.toMatch(/accessToken|refreshToken/)
      const row = await findUser(user.email)
      expect(row).toMatchObject({ isActive: false, lastLogin: null })
      expect(await ctx.database.db.select().from(tokenFamilies).where(eq(tokenFamilies.userId, user.id))).toEqual([])
    })

    it('refuses a malformed e-mail (400 on email) and a missing password (400 on password)', async () => {
      expectValidationError(await login('not-an-email', PASSWORD), ['email'])
      expectValidationError(await post('/auth/login', { email: newEmail() }), ['password'])
      expectValidationError(await post('/auth/login', { email: newEmail(), password: '' }), ['password'])
    })

    it('ignores an invalid bearer token on this public route', async () => {
      const account = await createUser(ctx)
      const response = await request(ctx.app, {
        method: 'POST',
        url: '/auth/login',
        payload: { email: account.user.email, password: account.password },
        token: 'not-a-token',
      })
      expect(response.statusCode).toBe(200)
    })
  })

  describe('POST /auth/refresh', () => {
    it('exchanges a refresh token sent as `refreshToken` (Variant A) for a working access token and a new refresh token', async () => {
      const account = await createUser(ctx)
      const response = await post('/auth/refresh', { refreshToken: account.refreshToken })
      expect(response.statusCode).toBe(200)
      const { data } = response.json()
      expect(Object.keys(data).sort()).toEqual(['accessToken', 'refreshToken'])
      expect(data.refreshToken).not.toBe(account.refreshToken)
      const profile = await me(data.accessToken)
      expect(profile.statusCode).toBe(200)
      expect(profile.json().data.id).toBe(account.user.id)
    })

    it('rotates within the session: each new refresh token works once and belongs to the family of the login', async () => {
      const account = await createUser(ctx)
      const family = familyOf(account.refreshToken)
      const first = (await refresh(account.refreshToken)).json().data
      const second = await refresh(first.refreshToken)
      expect(second.statusCode).toBe(200)
      const { data } = second.json()
      expect(data.refreshToken).not.toBe(first.refreshToken)
      for (const token of [first.accessToken, first.refreshToken, data.accessToken, data.refreshToken]) expect(familyOf(token)).toBe(family)
      expect((await me(data.accessToken)).statusCode).toBe(200)

      const rows = await refreshTokenRows(family)
      expect(rows).toHaveLength(3)
      expect(rows.filter((row) => row.usedAt === null).map((row) => row.jti)).toEqual([decodeJwt(data.refreshToken).jti])
    })

    it('refuses a refresh token presented a second time (401) and ends its session: the newest pair and the older access token are refused too', async () => {
      const account = await createUser(ctx)
      const otherSession = (await login(account.user.email, account.password)).json().data
      const rotated = (await refresh(account.refreshToken)).json().data

      expectUnauthenticated(await refresh(account.refreshToken))

      expectUnauthenticated(await refresh(rotated.refreshToken))
      expectUnauthenticated(await me(rotated.accessToken))
      expectUnauthenticated(await me(account.accessToken))
      expect((await familyRow(familyOf(account.refreshToken)))?.revokedAt).toEqual(ctx.clock.now())
      // Only that login ends: the user's other session goes on.
      expect((await me(otherSession.accessToken)).statusCode).toBe(200)
      expect((await refresh(otherSession.refreshToken)).statusCode).toBe(200)
    })

    it('lets exactly one of two simultaneous refreshes with one token through (200, 401); the second counts as reuse and ends the session', async () => {
      const account = await createUser(ctx)
      const family = familyOf(account.refreshToken)
      // On PostgreSQL both requests have verified the token before either may take the row lock.
      const responses = await withLockHeld('select id from token_families where id = $1 for update', [family], 2, () =>
        Promise.all([0, 1].map(() => refresh(account.refreshToken))),
      )
      expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 401])
      expectUnauthenticated(responses.find((response) => response.statusCode === 401)!)

      // The server cannot tell a second legitimate request from a thief's (decision 0013).
      const winner = responses.find((response) => response.statusCode === 200)!.json().data
      expectUnauthenticated(await refresh(winner.refreshToken))
      expectUnauthenticated(await me(winner.accessToken))
      expect((await familyRow(family))?.revokedAt).not.toBeNull()
      expect(await refreshTokenRows(family)).toHaveLength(2)
    })

    it('keeps the session to 7 days from login: a refresh token from a late rotation expires with it', async () => {
      const account = await createUser(ctx)
      ctx.clock.advance(6 * DAY)
      const rotated = (await refresh(account.refreshToken)).json().data
      expect(decodeJwt(rotated.refreshToken).exp).toBe(decodeJwt(account.refreshToken).exp)
      ctx.clock.advance(DAY + SECOND)
      expectUnauthenticated(await refresh(rotated.refreshToken))
    })

    it('exchanges a refresh token sent as `refresh` (Variant B) for a working access token', async () => {
      const account = await createUser(ctx)
      const response = await post('/auth/refresh', { refresh: account.refreshToken })
      expect(response.statusCode).toBe(200)
      expect((await me(response.json().data.accessToken)).statusCode).toBe(200)
    })

    it('refuses a body with neither field (400 on refreshToken)', async () => {
      expectValidationError(await post('/auth/refresh', {}), ['refreshToken'])
    })

    it('refuses an unknown field (400 on it, and on the missing token)', async () => {
      const account = await createUser(ctx)
      expectValidationError(await post('/auth/refresh', { token: account.refreshToken }), ['refreshToken', 'token'])
    })

    it('refuses a well-signed refresh token that names no user (401 UNAUTHENTICATED)', async () => {
      const family = { id: newId(), expiresAt: new Date(ctx.clock.now().getTime() + DAY) }
      const token = await ctx.app.container.auth.tokens.signRefresh({ id: newId(), email: newEmail(), fullName: 'Nobody Here', tokenVersion: 0 }, family)
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: token }))
    })

    it('refuses the refresh token of an account that is not active (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx, { isActive: false })
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: account.refreshToken }))
    })

    it('refuses an access token used as a refresh token (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: account.accessToken }))
    })

    it.each(['garbage', 'a.b.c'])('refuses the malformed refresh token %j (401 UNAUTHENTICATED)', async (token) => {
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: token }))
    })

    it('refuses an activation token used as a refresh token (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: await ctx.app.container.auth.tokens.signActivation(account.user.id) }))
    })

    it('accepts a refresh token just before 7 days and refuses it after (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      ctx.clock.advance(7 * DAY - SECOND)
      expect((await post('/auth/refresh', { refreshToken: account.refreshToken })).statusCode).toBe(200)
      ctx.clock.advance(2 * SECOND)
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: account.refreshToken }))
    })

    it('refuses the refresh token of a user deactivated by staff (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      await ctx.app.container.admin.deactivateUser(await superuserActor(), account.user.id)
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: account.refreshToken }))
    })

    it('refuses a refresh token revoked by logout (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      expect((await post('/auth/logout', { refreshToken: account.refreshToken }, account.accessToken)).statusCode).toBe(200)
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: account.refreshToken }))
      expectUnauthenticated(await post('/auth/refresh', { refresh: account.refreshToken }))
    })
  })

  describe('POST /auth/logout', () => {
    const revokedJtis = async (...tokens: string[]) => {
      const jtis = tokens.map((token) => decodeJwt(token).jti!)
      const rows = await ctx.database.db.select().from(revokedTokens)
      return rows.filter((row) => jtis.includes(row.jti))
    }

    it('refuses a call without a token (401 UNAUTHENTICATED)', async () => {
      expectUnauthenticated(await post('/auth/logout', {}))
    })

    it('refuses a call with an invalid token (401 UNAUTHENTICATED)', async () => {
      expectUnauthenticated(await post('/auth/logout', {}, 'garbage'))
    })

    it('ends the session it was called from: the access token and the refresh token of that login are refused (401)', async () => {
      const account = await createUser(ctx)
      const response = await post('/auth/logout', undefined, account.accessToken)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { message: expect.any(String) } })

      expectUnauthenticated(await me(account.accessToken))
      expectUnauthenticated(await post('/auth/logout', {}, account.accessToken))
      expectUnauthenticated(await refresh(account.refreshToken))
      expect((await familyRow(familyOf(account.accessToken)))?.revokedAt).toEqual(ctx.clock.now())
      const [row] = await revokedJtis(account.accessToken)
      expect(row?.expiresAt).toEqual(new Date(decodeJwt(account.accessToken).exp! * 1000))
    })

    it('refuses every token of the session after logout, also those from a rotation before it', async () => {
      const account = await createUser(ctx)
      const rotated = (await refresh(account.refreshToken)).json().data
      expect((await post('/auth/logout', {}, rotated.accessToken)).statusCode).toBe(200)
      expectUnauthenticated(await refresh(rotated.refreshToken))
      expectUnauthenticated(await me(rotated.accessToken))
      expectUnauthenticated(await me(account.accessToken))
    })

    it.each(['refreshToken', 'refresh'])('also ends the session of a refresh token of the caller sent as `%s`', async (field) => {
      const account = await createUser(ctx)
      const other = (await login(account.user.email, account.password)).json().data
      expect((await post('/auth/logout', { [field]: other.refreshToken }, account.accessToken)).statusCode).toBe(200)
      expectUnauthenticated(await refresh(other.refreshToken))
      expectUnauthenticated(await me(other.accessToken))
      expectUnauthenticated(await refresh(account.refreshToken))
    })

    it('does not revoke the refresh token of another user sent at logout', async () => {
      const caller = await createUser(ctx)
      const victim = await createUser(ctx)
      expect((await post('/auth/logout', { refreshToken: victim.refreshToken }, caller.accessToken)).statusCode).toBe(200)
      expect((await familyRow(familyOf(victim.refreshToken)))?.revokedAt).toBeNull()
      expect((await post('/auth/refresh', { refreshToken: victim.refreshToken })).statusCode).toBe(200)
      expect((await me(victim.accessToken)).statusCode).toBe(200)
    })

    it('leaves the other sessions of the same user alone', async () => {
      const account = await createUser(ctx)
      const other = (await login(account.user.email, account.password)).json().data
      expect((await post('/auth/logout', { refreshToken: account.refreshToken }, account.accessToken)).statusCode).toBe(200)
      expect((await me(other.accessToken)).statusCode).toBe(200)
      expect((await post('/auth/refresh', { refreshToken: other.refreshToken })).statusCode).toBe(200)
    })
  })

  describe.each([
    ['/auth/forgot-password', '/auth/reset-password'],
    ['/auth/password-reset/ask', '/auth/password-reset'],
  ])('password reset through %s and %s', (askPath, resetPath) => {
    /** Asks for a reset of an active account and returns the e-mailed token. */
    async function resetTokenFor(email: string): Promise<string> {
      expect((await post(askPath, { email })).statusCode).toBe(200)
      return tokenMailedTo(email)
    }

    it('answers 200 with the normalised e-mail and mails an active account a reset link', async () => {
      const account = await createUser(ctx)
      const response = await post(askPath, { email: `  ${account.user.email.toUpperCase()} ` })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { email: account.user.email } })
      expect(mailsTo(account.user.email)).toHaveLength(0)

      await ctx.app.container.worker.drain()
      const [mail] = mailsTo(account.user.email)
      expect(mailsTo(account.user.email)).toHaveLength(1)
      const link = ctx.mailer.linkTo(account.user.email)
      expect(link).toMatch(/^http:\/\/app\.test\/reset-password\?token=[\w.-]+$/)
      expect(mail?.subject).toBe('Reset your password')
      expect(mail?.text).toContain(link)
      expect(mail?.html).toContain(`href="${link}"`)
    })

    it('queues one job carrying only the normalised e-mail for a known and an unknown address alike, without looking the account up', async () => {
      const account = await createUser(ctx)
      const unknown = newEmail()
      const lookups = await accountLookupsDuring(async () => {
        for (const email of [account.user.email, unknown]) {
          const response = await post(askPath, { email: ` ${email.toUpperCase()} ` })
          expect(response.json()).toEqual({ success: true, data: { email } })
        }
      })
      expect(lookups).toBe(0)
      for (const email of [account.user.email, unknown]) {
        const jobs = await mailJobsFor(MAIL_JOBS.passwordReset.topic, email)
        expect(jobs.map((job) => job.payload)).toEqual([{ email }])
      }

      await ctx.app.container.worker.drain()
      expect(mailsTo(account.user.email)).toHaveLength(1)
      expect(mailsTo(unknown)).toHaveLength(0)
      for (const email of [account.user.email, unknown]) expect((await mailJobsFor(MAIL_JOBS.passwordReset.topic, email))[0]?.status).toBe('done')
    })

    it('answers the same for an unknown e-mail and sends nothing', async () => {
      const email = newEmail()
      const response = await post(askPath, { email })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { email } })
      await ctx.app.container.worker.drain()
      expect(mailsTo(email)).toHaveLength(0)
    })

    it('answers the same for an inactive account and sends nothing', async () => {
      const account = await createUser(ctx, { isActive: false })
      const response = await post(askPath, { email: account.user.email })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { email: account.user.email } })
      await ctx.app.container.worker.drain()
      expect(mailsTo(account.user.email)).toHaveLength(0)
    })

    it('refuses a malformed or missing e-mail (400 on email)', async () => {
      expectValidationError(await post(askPath, { email: 'nope' }), ['email'])
      expectValidationError(await post(askPath, {}), ['email'])
    })

    it('replaces the password: the old one stops working, the new one works, and earlier tokens are refused', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const before = await findUser(account.user.email)

      const response = await post(resetPath, { token, password: NEW_PASSWORD })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { email: account.user.email } })

      const after = await findUser(account.user.email)
      expect(after?.passwordHash).not.toBe(before?.passwordHash)
      expect(after?.tokenVersion).toBe(before!.tokenVersion + 1)
      expectUnauthenticated(await login(account.user.email, account.password))
      const fresh = await login(account.user.email, NEW_PASSWORD)
      expect(fresh.statusCode).toBe(200)
      expect((await me(fresh.json().data.accessToken)).statusCode).toBe(200)

      expectUnauthenticated(await me(account.accessToken))
      expectUnauthenticated(await post('/auth/refresh', { refreshToken: account.refreshToken }))
    })

    it('accepts a reset token only once (400 on token the second time)', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      expect((await post(resetPath, { token, password: NEW_PASSWORD })).statusCode).toBe(200)
      expectValidationError(await post(resetPath, { token, password: 'Another9Pass' }), ['token'])
      expect((await login(account.user.email, NEW_PASSWORD)).statusCode).toBe(200)
      expectUnauthenticated(await login(account.user.email, 'Another9Pass'))
    })

    it('spends every other reset token issued for the old password', async () => {
      const account = await createUser(ctx)
      const first = await resetTokenFor(account.user.email)
      const second = await resetTokenFor(account.user.email)
      expect(second).not.toBe(first)
      expect((await post(resetPath, { token: second, password: NEW_PASSWORD })).statusCode).toBe(200)
      expectValidationError(await post(resetPath, { token: first, password: 'Another9Pass' }), ['token'])
    })

    it('lets only one of two simultaneous uses of a reset token through', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const responses = await Promise.all(['First1pass', 'Second2pass'].map((password) => post(resetPath, { token, password })))
      expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 400])
      const winner = responses[0]!.statusCode === 200 ? 'First1pass' : 'Second2pass'
      const loser = winner === 'First1pass' ? 'Second2pass' : 'First1pass'
      expectValidationError(responses.find((response) => response.statusCode === 400)!, ['token'])
      expect((await login(account.user.email, winner)).statusCode).toBe(200)
      expectUnauthenticated(await login(account.user.email, loser))
      expect((await findUser(account.user.email))?.tokenVersion).toBe(account.user.tokenVersion + 1)
    })

    it.each([
      ['shorter than 8 characters', 'Ab1defg'],
      ['without an uppercase letter', 'fresh4start'],
      ['without a lowercase letter', 'FRESH4START'],
      ['without a digit', 'FreshStart'],
    ])('refuses a new password %s (400 on password) and leaves the token usable', async (_label, password) => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      expectValidationError(await post(resetPath, { token, password }), ['password'])
      expect((await login(account.user.email, account.password)).statusCode).toBe(200)
      expect((await post(resetPath, { token, password: NEW_PASSWORD })).statusCode).toBe(200)
    })

    it('refuses a missing token or password (400 on each)', async () => {
      expectValidationError(await post(resetPath, { password: NEW_PASSWORD }), ['token'])
      expectValidationError(await post(resetPath, { token: 'x' }), ['password'])
    })

    it('refuses a reset token older than 1 hour with 400 TOKEN_EXPIRED naming the route for a new link, and keeps the old password', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const before = await findUser(account.user.email)
      ctx.clock.advance(HOUR + SECOND)
      const response = await post(resetPath, { token, password: NEW_PASSWORD })
      expectError(response, 400, 'TOKEN_EXPIRED', ['token'])
      expect(response.json().error.message).toContain('/api/v1/auth/forgot-password')
      expect((await findUser(account.user.email))?.passwordHash).toBe(before?.passwordHash)
      expect((await login(account.user.email, account.password)).statusCode).toBe(200)
    })

    it('keeps answering a forged expired reset token as invalid (400 VALIDATION_ERROR on token)', async () => {
      const account = await createUser(ctx)
      const genuine = await resetTokenFor(account.user.email)
      const forged = await new SignJWT(decodeJwt(genuine)).setProtectedHeader({ alg: 'HS256', typ: 'reset+jwt' }).sign(randomBytes(32))
      ctx.clock.advance(HOUR + SECOND)
      expectValidationError(await post(resetPath, { token: forged, password: NEW_PASSWORD }), ['token'])
    })

    it('accepts a reset token just before 1 hour has passed', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      ctx.clock.advance(HOUR - SECOND)
      expect((await post(resetPath, { token, password: NEW_PASSWORD })).statusCode).toBe(200)
    })

    it.each(['activation', 'access', 'refresh'] as const)('refuses the %s token of the account as a reset token (400 on token)', async (kind) => {
      const account = await createUser(ctx)
      const token =
        kind === 'activation'
          ? await ctx.app.container.auth.tokens.signActivation(account.user.id)
          : kind === 'access'
            ? account.accessToken
            : account.refreshToken
      expectValidationError(await post(resetPath, { token, password: NEW_PASSWORD }), ['token'])
      expect((await login(account.user.email, account.password)).statusCode).toBe(200)
    })

    it('refuses a reset token of an account deactivated after it was mailed (400 on token)', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      await ctx.app.container.admin.deactivateUser(await superuserActor(), account.user.id)
      expectValidationError(await post(resetPath, { token, password: NEW_PASSWORD }), ['token'])
    })
  })

  describe('GET /auth/check-email', () => {
    const check = (query: string) => request(ctx.app, { method: 'GET', url: `/auth/check-email${query}` })

    it('answers exists: true with the normalised e-mail for a registered account', async () => {
      const user = await register()
      const response = await check(`?email=${encodeURIComponent(` ${user.email.toUpperCase()} `)}`)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { exists: true, email: user.email } })
    })

    it('answers exists: false for an unknown e-mail', async () => {
      const email = newEmail()
      const response = await check(`?email=${encodeURIComponent(email)}`)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { exists: false, email } })
    })

    it('refuses a missing or malformed e-mail (400 on email)', async () => {
      expectValidationError(await check(''), ['email'])
      expectValidationError(await check('?email='), ['email'])
      expectValidationError(await check('?email=not-an-email'), ['email'])
    })
  })

  describe('expired sessions', () => {
    it('purges a token family and its refresh tokens once the session has expired, and keeps live sessions', async () => {
      const expired = await createUser(ctx)
      await refresh(expired.refreshToken)
      ctx.clock.advance(7 * DAY + SECOND)
      const live = await createUser(ctx)

      expect(await ctx.app.container.auth.purgeTokenFamilies()).toBeGreaterThanOrEqual(1)
      expect(await familyRow(familyOf(expired.refreshToken))).toBeUndefined()
      expect(await refreshTokenRows(familyOf(expired.refreshToken))).toHaveLength(0)
      expect(await familyRow(familyOf(live.refreshToken))).toBeDefined()
      expect((await refresh(live.refreshToken)).statusCode).toBe(200)
    })
  })

  describe('tokens presented to a protected route (GET /users/me)', () => {
    const base64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url')

    it('refuses a request without an Authorization header (401 UNAUTHENTICATED)', async () => {
      expectUnauthenticated(await request(ctx.app, { method: 'GET', url: '/users/me' }))
    })

    it.each([
      ['a Basic scheme', 'Basic dXNlcjpwYXNz'],
      ['the Bearer word alone', 'Bearer'],
      ['an empty Bearer token', 'Bearer '],
      ['a token without a scheme word', 'eyJhbGciOiJIUzI1NiJ9.e30.x'],
    ])('refuses %s (401 UNAUTHENTICATED)', async (_label, authorization) => {
      expectUnauthenticated(await request(ctx.app, { method: 'GET', url: '/users/me', headers: { authorization } }))
    })

    it('refuses a valid access token sent with another scheme word (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      expectUnauthenticated(await request(ctx.app, { method: 'GET', url: '/users/me', headers: { authorization: `Token ${account.accessToken}` } }))
    })

    it('refuses an access token signed with another secret (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      const forged = await new SignJWT(decodeJwt(account.accessToken)).setProtectedHeader({ alg: 'HS256', typ: 'access+jwt' }).sign(randomBytes(32))
      expectUnauthenticated(await me(forged))
    })

    it('refuses an access token with alg "none" and no signature (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      const forged = `${base64url({ alg: 'none', typ: 'access+jwt' })}.${base64url(decodeJwt(account.accessToken))}.`
      expectUnauthenticated(await me(forged))
    })

    it('refuses an access token whose claims were changed after signing (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      const admin = await createSuperuser(ctx)
      const [header, , signature] = account.accessToken.split('.')
      const forged = `${header}.${base64url({ ...decodeJwt(account.accessToken), sub: admin.user.id })}.${signature}`
      expectUnauthenticated(await me(forged))
    })

    it('accepts an access token just before 15 minutes and refuses it after (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      ctx.clock.advance(15 * MINUTE - SECOND)
      expect((await me(account.accessToken)).statusCode).toBe(200)
      ctx.clock.advance(2 * SECOND)
      expectUnauthenticated(await me(account.accessToken))
    })

    it.each(['refresh', 'activation', 'reset'] as const)('refuses the %s token of the account used as an access token (401 UNAUTHENTICATED)', async (kind) => {
      const account = await createUser(ctx)
      const { tokens } = ctx.app.container.auth
      const token = kind === 'refresh' ? account.refreshToken : kind === 'activation' ? await tokens.signActivation(account.user.id) : await tokens.signReset(account.user)
      expectUnauthenticated(await me(token))
    })

    it('refuses the still-unexpired access token of a user deactivated by staff at once (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx)
      expect((await me(account.accessToken)).statusCode).toBe(200)
      await ctx.app.container.admin.deactivateUser(await superuserActor(), account.user.id)
      expectUnauthenticated(await me(account.accessToken))
    })

    it('refuses a well-signed access token that names no user (401 UNAUTHENTICATED)', async () => {
      const family = { id: newId(), expiresAt: new Date(ctx.clock.now().getTime() + DAY) }
      const token = await ctx.app.container.auth.tokens.signAccess({ id: newId(), email: newEmail(), fullName: 'Nobody Here', tokenVersion: 0 }, family)
      expectUnauthenticated(await me(token))
    })

    it('refuses the access token of an inactive account (401 UNAUTHENTICATED)', async () => {
      const account = await createUser(ctx, { isActive: false })
      expectUnauthenticated(await me(account.accessToken))
    })
  })
})
