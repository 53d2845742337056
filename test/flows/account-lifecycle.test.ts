import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext } from '../setup/test-app.ts'

describe('account lifecycle: register, activate by e-mail, log in, refresh, log out', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  it('takes a new user from registration to an authenticated session and back out', async () => {
    const registered = await request(ctx.app, {
      method: 'POST',
      url: '/auth/register',
      payload: { email: '  Maria.Lopez@Example.COM ', password: 'Secret123', name: 'María López' },
    })
    expect(registered.statusCode).toBe(201)
    const user = registered.json().data
    expect(user).toMatchObject({ email: 'maria.lopez@example.com', fullName: 'María López', username: 'maria_lopez', isActive: false })
    expect(user).not.toHaveProperty('passwordHash')

    const early = await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'maria.lopez@example.com', password: 'Secret123' } })
    // The right password before activation: the owner is told to activate, with where to get a new link.
    expect(early.statusCode).toBe(401)
    expect(early.json().error.code).toBe('ACCOUNT_NOT_ACTIVATED')
    expect(early.json().error.message).toContain('/api/v1/auth/activation/resend')

    // The activation e-mail leaves through the outbox, after the registration committed.
    expect(ctx.mailer.sent).toHaveLength(0)
    expect(await ctx.app.container.worker.drain()).toBe(1)
    const link = ctx.mailer.linkTo('maria.lopez@example.com')
    expect(link.startsWith('http://app.test/activate?token=')).toBe(true)

    const activated = await request(ctx.app, { method: 'POST', url: '/auth/activate', payload: { token: ctx.mailer.tokenTo('maria.lopez@example.com') } })
    expect(activated.statusCode).toBe(200)
    expect(activated.json().data).toMatchObject({ id: user.id, isActive: true })

    const login = await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'MARIA.LOPEZ@example.com', password: 'Secret123' } })
    expect(login.statusCode).toBe(200)
    const session = login.json().data
    expect(session.user).toMatchObject({ id: user.id, email: 'maria.lopez@example.com', name: 'María López', role: 'client' })
    expect(session.user.lastLogin).not.toBeNull()

    const me = await request(ctx.app, { method: 'GET', url: '/users/me', token: session.accessToken })
    expect(me.statusCode).toBe(200)
    expect(me.json().data).toMatchObject({ id: user.id, permissions: [] })

    const refreshed = await request(ctx.app, { method: 'POST', url: '/auth/refresh', payload: { refresh: session.refreshToken } })
    expect(refreshed.statusCode).toBe(200)
    const { accessToken } = refreshed.json().data
    expect(typeof accessToken).toBe('string')

    const logout = await request(ctx.app, { method: 'POST', url: '/auth/logout', token: accessToken, payload: { refreshToken: session.refreshToken } })
    expect(logout.statusCode).toBe(200)
    expect((await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken })).statusCode).toBe(401)
    expect((await request(ctx.app, { method: 'POST', url: '/auth/refresh', payload: { refreshToken: session.refreshToken } })).statusCode).toBe(401)
    // Logout ends the whole session: the access token from login belongs to it too (decision 0013).
    expect((await request(ctx.app, { method: 'GET', url: '/users/me', token: session.accessToken })).statusCode).toBe(401)
  })
})
