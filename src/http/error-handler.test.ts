import { PassThrough } from 'node:stream'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../app.ts'
import { ManualClock } from '../lib/clock.ts'
import { createSuperuser, unique, type TestUser } from '../../test/factories/users.ts'
import {
  API,
  createTestApp,
  fieldsOf,
  MemoryMailer,
  openTestDatabase,
  request,
  testConfig,
  type ErrorJson,
  type TestContext,
} from '../../test/setup/test-app.ts'
import { AppError } from '../lib/errors.ts'

/** Asserts the exact Variant A failure shape (docs/api-conventions.md) and returns its `error`. */
function expectError(response: LightMyRequestResponse, status: number, code: string): ErrorJson['error'] {
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toMatch(/^application\/json/)
  const body = response.json<ErrorJson>()
  expect(Object.keys(body).sort()).toEqual(['error', 'success'])
  expect(body.success).toBe(false)
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message'])
  expect(body.error.code).toBe(code)
  expect(typeof body.error.message).toBe('string')
  expect(body.error.message.length).toBeGreaterThan(0)
  expect(Array.isArray(body.error.details)).toBe(true)
  for (const detail of body.error.details) {
    expect(Object.keys(detail).sort()).toEqual(['field', 'message'])
    expect(typeof detail.field).toBe('string')
    expect(typeof detail.message).toBe('string')
  }
  return body.error
}

const login = (app: FastifyInstance, payload: string, contentType = 'application/json') =>
  app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'content-type': contentType }, payload })

describe('error answers of real routes', () => {
  let ctx: TestContext
  let admin: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    admin = await createSuperuser(ctx)
  })
  afterAll(() => ctx.close())

  it('answers a malformed JSON body with 400 VALIDATION_ERROR on the field `body`', async () => {
    const response = await login(ctx.app, '{"email": "a@b.co", "password": ')
    const error = expectError(response, 400, 'VALIDATION_ERROR')
    expect(error.details.map((detail) => detail.field)).toEqual(['body'])
  })

  it('answers an empty body sent as JSON with 400 VALIDATION_ERROR on the field `body`', async () => {
    const response = await login(ctx.app, '')
    const error = expectError(response, 400, 'VALIDATION_ERROR')
    expect(error.details.map((detail) => detail.field)).toEqual(['body'])
  })

  it('refuses a text/plain body with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await login(ctx.app, 'email=a@b.co&password=Secret123', 'text/plain')
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('refuses an application/xml body with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await login(ctx.app, '<login><email>a@b.co</email></login>', 'application/xml')
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('refuses a body without a content type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const response = await ctx.app.inject({ method: 'POST', url: `${API}/auth/login`, payload: '{"email":"a@b.co","password":"Secret123"}' })
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it('answers a 10 MB JSON body with 413 PAYLOAD_TOO_LARGE, never 500', async () => {
    const payload = JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(10 * 1024 * 1024) })
    const response = await login(ctx.app, payload)
    const error = expectError(response, 413, 'PAYLOAD_TOO_LARGE')
    expect(error.details).toEqual([])
  })

  it.each([
    ['an array', '[{"email":"a@b.co","password":"Secret123"}]'],
    ['a string', '"a@b.co"'],
    ['a number', '42'],
  ])('answers a JSON body that is %s with 400 VALIDATION_ERROR on the field `body`', async (_kind, payload) => {
    const response = await login(ctx.app, payload)
    expectError(response, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(response)).toEqual(['body'])
  })

  it('answers a JSON null body with 400 VALIDATION_ERROR, never 500', async () => {
    const response = await login(ctx.app, 'null')
    const error = expectError(response, 400, 'VALIDATION_ERROR')
    expect(error.details.length).toBeGreaterThan(0)
  })

  it('answers a body with a __proto__ key with 400 and leaves Object.prototype untouched', async () => {
    const response = await login(ctx.app, '{"email":"a@b.co","password":"Secret123","__proto__":{"isSuperuser":true}}')
    expectError(response, 400, 'VALIDATION_ERROR')
    expect(({} as Record<string, unknown>).isSuperuser).toBeUndefined()
  })

  it('answers a body with constructor.prototype with 400, never 500', async () => {
    const response = await login(ctx.app, '{"email":"a@b.co","password":"Secret123","constructor":{"prototype":{"isSuperuser":true}}}')
    expectError(response, 400, 'VALIDATION_ERROR')
    expect(({} as Record<string, unknown>).isSuperuser).toBeUndefined()
  })

  it('answers a nested __proto__ key with 400, never 500', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: `${API}/admin/roles`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.accessToken}` },
      payload: '{"name":"pollution","permissions":[],"meta":{"__proto__":{"polluted":true}}}',
    })
    expectError(response, 400, 'VALIDATION_ERROR')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('answers an unknown route with the 404 NOT_FOUND envelope', async () => {
    for (const url of [`${API}/no-such-thing`, '/no-such-thing', `${API}/users/me/nope`]) {
      const response = await ctx.app.inject({ method: 'GET', url })
      const error = expectError(response, 404, 'NOT_FOUND')
      expect(error.details).toEqual([])
    }
  })

  it('answers a wrong method on a known path with 405 METHOD_NOT_ALLOWED and Allow listing its methods', async () => {
    const cases: [method: 'GET' | 'DELETE' | 'POST' | 'PUT', url: string, allow: string][] = [
      ['GET', `${API}/auth/login`, 'POST, OPTIONS'],
      ['DELETE', `${API}/auth/register`, 'POST, OPTIONS'],
      ['POST', `${API}/users/me`, 'GET, HEAD, PUT, PATCH, OPTIONS'],
      // A path with a parameter and a query string: the method is checked against the route's path.
      ['PUT', `${API}/services/0190a000-0000-7000-8000-00000000abcd/pause?x=1`, 'POST, OPTIONS'],
      ['DELETE', `${API}/uploads/avatars/a.png`, 'GET, HEAD, OPTIONS'],
    ]
    for (const [method, url, allow] of cases) {
      const response = await ctx.app.inject({ method, url, ...(method !== 'GET' && method !== 'DELETE' && { payload: {} }) })
      expectError(response, 405, 'METHOD_NOT_ALLOWED')
      expect(response.headers.allow, `${method} ${url}`).toBe(allow)
      expect(response.json().error.details).toEqual([])
    }
  })

  it('still answers an unknown path with 404 NOT_FOUND, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const response = await ctx.app.inject({ method, url: `${API}/no-such-thing` })
      expectError(response, 404, 'NOT_FOUND')
      expect(response.headers.allow).toBeUndefined()
    }
  })

  it('names every field that breaks a registration rule in details (account rules 1 to 4 of docs/api-conventions.md)', async () => {
    const response = await request(ctx.app, {
      method: 'POST',
      url: '/auth/register',
      payload: { email: 'not-an-email', password: 'short', fullName: 'x', username: 'Bad Name!' },
    })
    const error = expectError(response, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(response)).toEqual(['email', 'fullName', 'password', 'username'])
    for (const detail of error.details) expect(detail.message.length).toBeGreaterThan(0)
  })

  it('names a missing required field and an unknown field in details', async () => {
    const response = await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'a@b.co', isAdmin: true } })
    const error = expectError(response, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(response)).toEqual(['isAdmin', 'password'])
    expect(error.details.find((detail) => detail.field === 'password')?.message).toBe('is required')
  })

  it('does not coerce a JSON number into a string field', async () => {
    const response = await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'a@b.co', password: 12345678 } })
    expectError(response, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(response)).toEqual(['password'])
  })

  it('names nested fields with dotted paths', async () => {
    const response = await request(ctx.app, {
      method: 'POST',
      url: '/admin/roles',
      token: admin.accessToken,
      payload: { name: `role-${unique()}`, permissions: ['view_users', 'rule_the_world'] },
    })
    expectError(response, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(response)).toEqual(['permissions.1'])

    const staff = await request(ctx.app, {
      method: 'PUT',
      url: `/admin/staff/${admin.user.id}/roles`,
      token: admin.accessToken,
      payload: { roleIds: ['0190a6f0-0000-7000-8000-000000000000', 'not-a-uuid'] },
    })
    expectError(staff, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(staff)).toEqual(['roleIds.1'])
  })

  it('names the query-string field that breaks a rule', async () => {
    const response = await request(ctx.app, { method: 'GET', url: '/auth/check-email?email=nope' })
    expectError(response, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(response)).toEqual(['email'])

    const missing = await request(ctx.app, { method: 'GET', url: '/auth/check-email' })
    expectError(missing, 400, 'VALIDATION_ERROR')
    expect(fieldsOf(missing)).toEqual(['email'])
  })

  it('answers a malformed path id with 404 NOT_FOUND, like an id that does not exist', async () => {
    const malformed = await request(ctx.app, { method: 'GET', url: '/admin/roles/not-a-uuid', token: admin.accessToken })
    expectError(malformed, 404, 'NOT_FOUND')
    const unknown = await request(ctx.app, { method: 'GET', url: '/admin/roles/0190a6f0-0000-7000-8000-000000000000', token: admin.accessToken })
    expectError(unknown, 404, 'NOT_FOUND')
  })

  it('answers wrong credentials with 401 UNAUTHENTICATED and a missing token with 401 too', async () => {
    const wrong = await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'nobody@example.test', password: 'Secret123' } })
    expectError(wrong, 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'GET', url: '/users/me' }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'GET', url: '/users/me', token: 'not.a.jwt' }), 401, 'UNAUTHENTICATED')
  })
})

describe('errors thrown by handlers', () => {
  const SECRET = 'connection to 10.0.0.7 failed for user payments with password hunter2'
  let app: FastifyInstance
  let drop: () => Promise<void>
  const logs: string[] = []

  beforeAll(async () => {
    const opened = await openTestDatabase()
    drop = opened.drop
    const logStream = new PassThrough()
    logStream.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
    app = await buildApp({
      config: testConfig({ LOG_LEVEL: 'info' }),
      database: opened.database,
      mailer: new MemoryMailer(),
      clock: new ManualClock(),
      logStream,
    })
    app.get('/boom', async () => {
      throw new Error(SECRET)
    })
    app.get('/boom-type', async () => {
      const missing = undefined as unknown as { call(): void }
      missing.call()
    })
    app.get('/conflict', async () => {
      throw Object.assign(new Error(`lock held by worker ${SECRET}`), { statusCode: 409 })
    })
    app.get('/known', async () => {
      throw new AppError(422, 'INVALID_TRANSITION', 'An order that was never delivered cannot be completed', [{ field: 'status', message: 'is not allowed now' }])
    })
    await app.ready()
  })
  afterAll(async () => {
    await app.close()
    await drop()
  })

  it('answers a plain Error with 500 INTERNAL_ERROR whose message reveals nothing of it', async () => {
    const response = await app.inject({ method: 'GET', url: '/boom' })
    const error = expectError(response, 500, 'INTERNAL_ERROR')
    expect(error.details).toEqual([])
    expect(response.body).not.toContain('hunter2')
    expect(response.body).not.toContain('10.0.0.7')
    expect(response.body).not.toContain('stack')
  })

  it('answers a TypeError from a bug with 500 INTERNAL_ERROR without its text', async () => {
    const response = await app.inject({ method: 'GET', url: '/boom-type' })
    expectError(response, 500, 'INTERNAL_ERROR')
    expect(response.body).not.toMatch(/undefined|call/)
  })

  it('logs an unhandled error with the request id so the 500 can be traced', async () => {
    const response = await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'trace-boom-1' } })
    expect(response.statusCode).toBe(500)
    expect(response.headers['x-request-id']).toBe('trace-boom-1')
    await new Promise((resolve) => setImmediate(resolve))
    const entries = logs.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
    const logged = entries.find((entry) => entry.requestId === 'trace-boom-1' && entry.level === 50)
    expect(logged).toBeDefined()
    expect(JSON.stringify(logged)).toContain('hunter2')
  })

  it('keeps the status of an unknown 4xx error but not its message', async () => {
    const response = await app.inject({ method: 'GET', url: '/conflict' })
    // No catalogue names this error; its code only has to be a stable UPPER_SNAKE string.
    const error = expectError(response, 409, response.json<ErrorJson>().error.code)
    expect(error.code).toMatch(/^[A-Z][A-Z0-9_]+$/)
    expect(error.details).toEqual([])
    expect(response.body).not.toContain('hunter2')
    expect(response.body).not.toContain('lock held')
  })

  it('answers an AppError with its own status, code, message and details', async () => {
    const response = await app.inject({ method: 'GET', url: '/known' })
    const error = expectError(response, 422, 'INVALID_TRANSITION')
    expect(error.message).toBe('An order that was never delivered cannot be completed')
    expect(error.details).toEqual([{ field: 'status', message: 'is not allowed now' }])
  })
})

