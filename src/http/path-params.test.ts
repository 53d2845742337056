import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSuperuser } from '../../test/factories/users.ts'
import { createTestApp, request, type TestContext } from '../../test/setup/test-app.ts'

describe('path parameters', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  it('answers an overlong id with 404 NOT_FOUND in the envelope, like any malformed id', async () => {
    const { accessToken } = await createSuperuser(ctx)
    for (const url of [`/admin/roles/${'a'.repeat(150)}`, `/users/${'b'.repeat(600)}`, `/uploads/${'c/'.repeat(400)}x.png`]) {
      const response = await request(ctx.app, { method: 'GET', url, token: accessToken })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } })
    }
  })

  it('answers a path that does not decode (%E0%A4%A) with 404 NOT_FOUND in the envelope, with the usual headers', async () => {
    for (const url of ['/services/%E0%A4%A', '/users/%FF', '/categories/%E0%A4%A/services']) {
      const response = await request(ctx.app, { method: 'GET', url })
      expect(response.statusCode, url).toBe(404)
      expect(response.headers['content-type']).toMatch(/^application\/json/)
      expect(response.json()).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'No such route', details: [] } })
      expect(response.headers['api-version']).toBe('1')
      expect(response.headers['x-request-id']).toBeTruthy()
      // No hook runs for it, yet it carries what every answer carries.
      expect(response.headers).toMatchObject({
        vary: 'Prefer',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
        'access-control-allow-origin': '*',
      })
    }
  })
})
