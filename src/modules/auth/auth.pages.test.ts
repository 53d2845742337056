import { PassThrough } from 'node:stream'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { newId } from '../../lib/ids.ts'

const NEW_PASSWORD = 'Fresh4Start'
const AUTH_LIMIT = 1000

describe('activation and password-reset pages', () => {
  let ctx: TestContext
  const logChunks: string[] = []
  beforeAll(async () => {
    const logStream = new PassThrough()
    logStream.on('data', (chunk: Buffer) => logChunks.push(chunk.toString('utf8')))
    // A distinct auth limit shows which rate-limit bucket the pages count in.
    ctx = await createTestApp({ env: { LOG_LEVEL: 'info', RATE_LIMIT_AUTH: String(AUTH_LIMIT) }, logStream })
  })
  afterAll(() => ctx.close())

  const get = (url: string) => ctx.app.inject({ method: 'GET', url })

  /** Posts the fields as an HTML form does. */
  const submit = (url: string, fields: Record<string, string>) =>
    ctx.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    })

  const accountRow = (email: string) => ctx.app.container.users.findAccountByEmail(ctx.database.db, email)

  const activationTokenFor = (userId: string) => ctx.app.container.auth.tokens.signActivation(userId)

  const resetTokenFor = async (email: string) => ctx.app.container.auth.tokens.signReset((await accountRow(email))!)

  const login = (email: string, password: string) => request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email, password } })

  /** An HTML page that no cache keeps and no Referer carries away. */
  function expectPage(response: LightMyRequestResponse, status: number): void {
    expect(response.statusCode, response.body).toBe(status)
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(response.body).toMatch(/^<!doctype html>/)
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['referrer-policy']).toBe('no-referrer')
    expect(String(response.headers['content-security-policy'])).toContain("default-src 'self'")
    expect(response.body).not.toMatch(/<script/i)
  }

  describe('GET /activate', () => {
    it('shows a form that posts the token back, and does not activate the account', async () => {
      const account = await createUser(ctx, { isActive: false })
      const token = await activationTokenFor(account.user.id)
      const response = await get(`/activate?token=${encodeURIComponent(token)}`)
      expectPage(response, 200)
      expect(response.body).toContain('<form method="post" action="/activate">')
      expect(response.body).toContain(`<input type="hidden" name="token" value="${token}">`)
      expect(response.body).toContain('<button type="submit">')
      expect(await accountRow(account.user.email)).toMatchObject({ isActive: false, activatedAt: null })
    })

    it('escapes whatever the link carries', async () => {
      const response = await get(`/activate?token=${encodeURIComponent('"><script>alert(1)</script>&')}`)
      expectPage(response, 200)
      expect(response.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;"')
    })

    it('answers a link without a token with a 400 page', async () => {
      const response = await get('/activate')
      expectPage(response, 400)
      expect(response.body).toContain('incomplete')
      expect(response.body).not.toContain('<form')
    })

    it('counts in the auth rate-limit bucket', async () => {
      expect((await get('/activate?token=x')).headers['x-ratelimit-limit']).toBe(String(AUTH_LIMIT))
    })
  })

  describe('POST /activate', () => {
    it('activates the account named by the token and shows a success page', async () => {
      const account = await createUser(ctx, { isActive: false })
      const response = await submit('/activate', { token: await activationTokenFor(account.user.id) })
      expectPage(response, 200)
      expect(response.body).toContain('Your account is active')
      const row = await accountRow(account.user.email)
      expect(row).toMatchObject({ isActive: true, activatedAt: ctx.clock.now() })
      expect((await login(account.user.email, account.password)).statusCode).toBe(200)
    })

    it('answers the same link a second time with a 400 page that says to log in, and no account data', async () => {
      const account = await createUser(ctx, { isActive: false })
      const token = await activationTokenFor(account.user.id)
      expect((await submit('/activate', { token })).statusCode).toBe(200)
      const again = await submit('/activate', { token })
      expectPage(again, 400)
      expect(again.body).toContain('already been used; log in instead')
      expect(again.body).not.toContain(account.user.email)
    })

    it.each([
      ['a malformed token', { token: 'garbage' }],
      ['an empty token', { token: '' }],
      ['no token', {}],
    ])('answers %s with a 400 page and activates nothing', async (_label, fields) => {
      const response = await submit('/activate', fields)
      expectPage(response, 400)
      expect(response.body).toContain('The link is invalid or has expired.')
    })

    it('answers a well-signed token of no account with a 400 page', async () => {
      expectPage(await submit('/activate', { token: await activationTokenFor(newId()) }), 400)
    })
  })

  describe('GET /reset-password', () => {
    it('shows a form for the new password, twice, that posts the token back', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const response = await get(`/reset-password?token=${encodeURIComponent(token)}`)
      expectPage(response, 200)
      expect(response.body).toContain('<form method="post" action="/reset-password">')
      expect(response.body).toContain(`<input type="hidden" name="token" value="${token}">`)
      expect(response.body.match(/type="password"/g)).toHaveLength(2)
      expect(response.body).toContain('name="password"')
      expect(response.body).toContain('name="passwordConfirmation"')
    })

    it('answers a link without a token with a 400 page', async () => {
      const response = await get('/reset-password')
      expectPage(response, 400)
      expect(response.body).not.toContain('<form')
    })
  })

  describe('POST /reset-password', () => {
    it('sets the new password and shows a success page: the new password logs in, the old one does not', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const response = await submit('/reset-password', { token, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD })
      expectPage(response, 200)
      expect(response.body).toContain('Your password was changed')
      expect((await login(account.user.email, NEW_PASSWORD)).statusCode).toBe(200)
      expect((await login(account.user.email, account.password)).statusCode).toBe(401)
      expect((await request(ctx.app, { method: 'GET', url: '/users/me', token: account.accessToken })).statusCode).toBe(401)
    })

    it.each([
      ['shorter than 8 characters', 'Ab1defg'],
      ['without an uppercase letter', 'fresh4start'],
      ['without a digit', 'FreshStart'],
    ])('refuses a new password %s with a 400 page that shows the rule and the form again, and keeps the old password', async (_label, password) => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const response = await submit('/reset-password', { token, password, passwordConfirmation: password })
      expectPage(response, 400)
      expect(response.body).toContain('The password must be 8 to 128 characters and contain an uppercase letter, a lowercase letter and a digit.')
      expect(response.body).toContain(`<input type="hidden" name="token" value="${token}">`)
      expect((await login(account.user.email, account.password)).statusCode).toBe(200)
      // The link still works once the password is good.
      expect((await submit('/reset-password', { token, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD })).statusCode).toBe(200)
    })

    it('refuses two passwords that differ with a 400 page and keeps the old password', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const response = await submit('/reset-password', { token, password: NEW_PASSWORD, passwordConfirmation: `${NEW_PASSWORD}x` })
      expectPage(response, 400)
      expect(response.body).toContain('do not match')
      expect((await login(account.user.email, account.password)).statusCode).toBe(200)
    })

    it('refuses a used, malformed or missing token with a 400 page', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      const good = { password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD }
      expect((await submit('/reset-password', { token, ...good })).statusCode).toBe(200)
      for (const fields of [{ token, ...good }, { token: 'garbage', ...good }, good]) {
        const response = await submit('/reset-password', fields)
        expectPage(response, 400)
        expect(response.body).toContain('The link is invalid or has expired.')
      }
    })
  })

  it('never writes a token or a password to the log', async () => {
    const account = await createUser(ctx, { isActive: false })
    const activation = await activationTokenFor(account.user.id)
    await get(`/activate?token=${encodeURIComponent(activation)}`)
    await submit('/activate', { token: activation })
    const reset = await resetTokenFor(account.user.email)
    await get(`/reset-password?token=${encodeURIComponent(reset)}`)
    await submit('/reset-password', { token: reset, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD })
    await submit('/reset-password', { token: 'garbage', password: 'Leaky9Password', passwordConfirmation: 'Leaky9Password' })

    const logs = logChunks.join('')
    expect(logs).toContain('/reset-password')
    for (const secret of [activation, reset, NEW_PASSWORD, 'Leaky9Password']) expect(logs).not.toContain(secret)
  })

  it('leaves the JSON API refusing form bodies (415 UNSUPPORTED_MEDIA_TYPE)', async () => {
    const account = await createUser(ctx)
    const response = await request(ctx.app, {
      method: 'POST',
      url: '/auth/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: account.user.email, password: account.password }).toString(),
    })
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })
})
