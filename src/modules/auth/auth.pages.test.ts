import { PassThrough } from 'node:stream'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY, HOUR, SECOND } from '../../lib/clock.ts'
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

  const ACTIVATION_FORM = '<form method="post" action="/activate">'
  const RESEND_FORM = '<form method="post" action="/activation/resend">'
  const RESET_FORM = '<form method="post" action="/reset-password">'
  const FORGOT_FORM = '<form method="post" action="/forgot-password">'

  /** The new-link form: one e-mail field, posted to a page of this server. */
  function expectNewLinkForm(body: string, form: string): void {
    expect(body).toContain(form)
    expect(body).toContain('name="email" type="email"')
    expect(body).toContain('Send me a new link')
  }

  /** Delivers the queued mail and returns the token in the newest message to `email`. */
  async function tokenMailedTo(email: string): Promise<string> {
    await ctx.app.container.worker.drain()
    return ctx.mailer.tokenTo(email)
  }

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

    it('answers a garbled link at once with a 400 page that offers a new link and does not echo the link', async () => {
      const response = await get(`/activate?token=${encodeURIComponent('"><script>alert(1)</script>&')}`)
      expectPage(response, 400)
      expect(response.body).toContain('The link is invalid or has expired.')
      expectNewLinkForm(response.body, RESEND_FORM)
      expect(response.body).not.toContain(ACTIVATION_FORM)
      expect(response.body).not.toContain('alert(1)')
    })

    it('answers an expired link at once with a 400 page that says so and offers a new link, and leaves the account inactive', async () => {
      const account = await createUser(ctx, { isActive: false })
      const token = await activationTokenFor(account.user.id)
      ctx.clock.advance(DAY + SECOND)
      const response = await get(`/activate?token=${encodeURIComponent(token)}`)
      expectPage(response, 400)
      expect(response.body).toContain('The link has expired; ask for a new link.')
      expectNewLinkForm(response.body, RESEND_FORM)
      expect(response.body).not.toContain(ACTIVATION_FORM)
      expect(await accountRow(account.user.email)).toMatchObject({ isActive: false, activatedAt: null })
    })

    it('answers a used link at once with a 400 page that says to log in, without a new-link form', async () => {
      const account = await createUser(ctx)
      const response = await get(`/activate?token=${encodeURIComponent(await activationTokenFor(account.user.id))}`)
      expectPage(response, 400)
      expect(response.body).toContain('already been used; log in instead')
      expect(response.body).not.toContain('<form')
    })

    it('answers a link without a token with a 400 page that offers a new link', async () => {
      const response = await get('/activate')
      expectPage(response, 400)
      expect(response.body).toContain('incomplete')
      expect(response.body).not.toContain(ACTIVATION_FORM)
      expectNewLinkForm(response.body, RESEND_FORM)
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

    it('answers a link that expired while the page was open with a 400 page that offers a new link', async () => {
      const account = await createUser(ctx, { isActive: false })
      const token = await activationTokenFor(account.user.id)
      expectPage(await get(`/activate?token=${encodeURIComponent(token)}`), 200)
      ctx.clock.advance(DAY + SECOND)
      const response = await submit('/activate', { token })
      expectPage(response, 400)
      expect(response.body).toContain('The link has expired; ask for a new link.')
      expectNewLinkForm(response.body, RESEND_FORM)
      expect((await accountRow(account.user.email))?.isActive).toBe(false)
    })
  })

  describe('POST /activation/resend (the new-link form)', () => {
    it('queues a new activation e-mail and says so without telling whether the account exists; the new link activates', async () => {
      const account = await createUser(ctx, { isActive: false })
      const expired = await activationTokenFor(account.user.id)
      ctx.clock.advance(DAY + SECOND)
      const response = await submit('/activation/resend', { email: ` ${account.user.email.toUpperCase()} ` })
      expectPage(response, 200)
      expect(response.body).toContain('Check your inbox')
      expect(response.body).toContain(`If ${account.user.email} belongs to an account waiting for activation`)
      expect(response.body).toContain('24 hours')

      const fresh = await tokenMailedTo(account.user.email)
      expect(fresh).not.toBe(expired)
      expectPage(await submit('/activate', { token: fresh }), 200)
      expect((await accountRow(account.user.email))?.isActive).toBe(true)
    })

    it('answers an unknown address with the same page and sends nothing', async () => {
      const email = `nobody.${newId()}@example.test`
      const response = await submit('/activation/resend', { email })
      expectPage(response, 200)
      expect(response.body).toContain(`If ${email} belongs to an account waiting for activation`)
      await ctx.app.container.worker.drain()
      expect(ctx.mailer.sent.filter((message) => message.to === email)).toEqual([])
    })

    it.each([
      ['a malformed address', { email: '"><script>alert(1)</script>' }],
      ['no address', {}],
    ])('answers %s with a 400 page that shows the form again, escaped, and sends nothing', async (_label, fields) => {
      const sentBefore = ctx.mailer.sent.length
      const response = await submit('/activation/resend', fields)
      expectPage(response, 400)
      expect(response.body).toContain('The e-mail address must be a valid e-mail address.')
      expectNewLinkForm(response.body, RESEND_FORM)
      if ('email' in fields) expect(response.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"')
      await ctx.app.container.worker.drain()
      expect(ctx.mailer.sent.length).toBe(sentBefore)
    })

    it('counts in the auth rate-limit bucket', async () => {
      expect((await submit('/activation/resend', {})).headers['x-ratelimit-limit']).toBe(String(AUTH_LIMIT))
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

    it('answers a link without a token with a 400 page that offers a new link', async () => {
      const response = await get('/reset-password')
      expectPage(response, 400)
      expect(response.body).not.toContain(RESET_FORM)
      expectNewLinkForm(response.body, FORGOT_FORM)
    })

    it('says an expired link has expired when the page opens, before any password is typed, and offers a new link', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      ctx.clock.advance(HOUR + SECOND)
      const response = await get(`/reset-password?token=${encodeURIComponent(token)}`)
      expectPage(response, 400)
      expect(response.body).toContain('The link has expired; ask for a new link.')
      expect(response.body).not.toContain('type="password"')
      expectNewLinkForm(response.body, FORGOT_FORM)
    })

    it('says a used or garbled link is no good when the page opens, and offers a new link', async () => {
      const account = await createUser(ctx)
      const used = await resetTokenFor(account.user.email)
      expectPage(await submit('/reset-password', { token: used, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD }), 200)
      for (const token of [used, 'garbage']) {
        const response = await get(`/reset-password?token=${encodeURIComponent(token)}`)
        expectPage(response, 400)
        expect(response.body).toContain('The link is invalid or has expired.')
        expect(response.body).not.toContain('type="password"')
        expectNewLinkForm(response.body, FORGOT_FORM)
      }
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

    it('answers a link that expired while the form was filled with a 400 page that offers a new link, and keeps the old password', async () => {
      const account = await createUser(ctx)
      const token = await resetTokenFor(account.user.email)
      ctx.clock.advance(HOUR + SECOND)
      const response = await submit('/reset-password', { token, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD })
      expectPage(response, 400)
      expect(response.body).toContain('The link has expired; ask for a new link.')
      expectNewLinkForm(response.body, FORGOT_FORM)
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

  describe('POST /forgot-password (the new-link form)', () => {
    it('queues a reset e-mail and says so without telling whether the account exists; the new link changes the password', async () => {
      const account = await createUser(ctx)
      const response = await submit('/forgot-password', { email: account.user.email })
      expectPage(response, 200)
      expect(response.body).toContain(`If ${account.user.email} belongs to an active account`)
      expect(response.body).toContain('1 hour')
      const token = await tokenMailedTo(account.user.email)
      expectPage(await get(`/reset-password?token=${encodeURIComponent(token)}`), 200)
      expectPage(await submit('/reset-password', { token, password: NEW_PASSWORD, passwordConfirmation: NEW_PASSWORD }), 200)
      expect((await login(account.user.email, NEW_PASSWORD)).statusCode).toBe(200)
    })

    it('answers a malformed address with a 400 page that shows the form again and sends nothing', async () => {
      const sentBefore = ctx.mailer.sent.length
      const response = await submit('/forgot-password', { email: 'not-an-address' })
      expectPage(response, 400)
      expect(response.body).toContain('The e-mail address must be a valid e-mail address.')
      expectNewLinkForm(response.body, FORGOT_FORM)
      expect(response.body).toContain('value="not-an-address"')
      await ctx.app.container.worker.drain()
      expect(ctx.mailer.sent.length).toBe(sentBefore)
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
