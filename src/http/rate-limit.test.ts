import { randomInt } from 'node:crypto'
import { PassThrough } from 'node:stream'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createUser, type TestUser } from '../../test/factories/users.ts'
import { twoInstances } from '../../test/setup/instances.ts'
import { API, createTestApp, TEST_REDIS_URL, type ErrorJson, type TestContext } from '../../test/setup/test-app.ts'

const LIMITS = { RATE_LIMIT_AUTH: '3', RATE_LIMIT_UPLOADS: '2', RATE_LIMIT_GENERAL: '4', RATE_LIMIT_WINDOW_SECONDS: '60' }

/** A fresh address per test, so runs sharing one Redis (or one app) never share a counter. */
const randomIp = (): string => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`

const send = (app: FastifyInstance, ip: string, options: InjectOptions & { url: string; token?: string }): Promise<LightMyRequestResponse> => {
  const { token, headers, ...rest } = options
  return app.inject({ ...rest, remoteAddress: ip, headers: { ...headers, ...(token && { authorization: `Bearer ${token}` }) } })
}

/** An authentication-route request: a login with wrong credentials (401). */
const login = (app: FastifyInstance, ip: string) =>
  send(app, ip, { method: 'POST', url: `${API}/auth/login`, payload: { email: 'nobody@example.test', password: 'Wrong-Passw0rd' } })

/** A general-route request: 200 with a token, 401 without. */
const me = (app: FastifyInstance, ip: string, token?: string) => send(app, ip, { method: 'GET', url: `${API}/users/me`, token })

const remaining = (response: LightMyRequestResponse): number => Number(response.headers['x-ratelimit-remaining'])

function expectRateLimited(response: LightMyRequestResponse, limit: number): void {
  expect(response.statusCode).toBe(429)
  const body = response.json<ErrorJson>()
  expect(body.success).toBe(false)
  expect(body.error.code).toBe('RATE_LIMITED')
  expect(body.error.details).toEqual([])
  expect(body.error.message.length).toBeGreaterThan(0)
  const retryAfter = Number(response.headers['retry-after'])
  expect(Number.isInteger(retryAfter)).toBe(true)
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(response.headers['x-ratelimit-limit']).toBe(String(limit))
  expect(response.headers['x-ratelimit-remaining']).toBe('0')
  expect(response.headers['api-version']).toBe('1')
}

function expectRateHeaders(response: LightMyRequestResponse, limit: number, left: number): void {
  expect(response.headers['x-ratelimit-limit']).toBe(String(limit))
  expect(response.headers['x-ratelimit-remaining']).toBe(String(left))
  expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/)
}

describe('rate limits per bucket (in memory)', () => {
  let ctx: TestContext
  let alice: TestUser
  let bob: TestUser
  beforeAll(async () => {
    ctx = await createTestApp({ env: LIMITS })
    alice = await createUser(ctx)
    bob = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  it('refuses the 4th authentication request from one IP with 429 RATE_LIMITED and Retry-After', async () => {
    const ip = randomIp()
    for (let attempt = 0; attempt < 3; attempt++) expect((await login(ctx.app, ip)).statusCode).toBe(401)
    expectRateLimited(await login(ctx.app, ip), 3)
    expectRateLimited(await login(ctx.app, ip), 3)
  })

  it('still lets another IP through while one IP is rate limited', async () => {
    const blocked = randomIp()
    for (let attempt = 0; attempt < 4; attempt++) await login(ctx.app, blocked)
    expect((await login(ctx.app, blocked)).statusCode).toBe(429)

    const other = await login(ctx.app, randomIp())
    expect(other.statusCode).toBe(401)
    expect(remaining(other)).toBe(2)
  })

  it('counts every authentication route against one per-IP budget', async () => {
    const ip = randomIp()
    expect((await send(ctx.app, ip, { method: 'GET', url: `${API}/auth/check-email?email=someone@example.test` })).statusCode).toBe(200)
    expect((await send(ctx.app, ip, { method: 'POST', url: `${API}/auth/forgot-password`, payload: { email: 'someone@example.test' } })).statusCode).toBe(200)
    expect((await send(ctx.app, ip, { method: 'POST', url: `${API}/auth/activate`, payload: { token: 'bogus' } })).statusCode).not.toBe(429)
    expectRateLimited(await send(ctx.app, ip, { method: 'POST', url: `${API}/auth/register`, payload: {} }), 3)
    expectRateLimited(await send(ctx.app, ip, { method: 'POST', url: `${API}/auth/refresh`, payload: { refresh: 'x' } }), 3)
  })

  it('counts authentication requests per IP even with a valid access token', async () => {
    const ip = randomIp()
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await send(ctx.app, ip, { method: 'GET', url: `${API}/auth/check-email?email=a@b.co`, token: alice.accessToken })
      expect(response.statusCode).toBe(200)
    }
    expectRateLimited(await send(ctx.app, ip, { method: 'GET', url: `${API}/auth/check-email?email=a@b.co`, token: bob.accessToken }), 3)
  })

  it('counts X-RateLimit-Remaining down on each answer and sends the limit', async () => {
    const ip = randomIp()
    const seen: number[] = []
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await login(ctx.app, ip)
      expect(response.headers['x-ratelimit-limit']).toBe('3')
      seen.push(remaining(response))
    }
    expect(seen).toEqual([2, 1, 0])
    const refused = await login(ctx.app, ip)
    expect(refused.statusCode).toBe(429)
    expect(remaining(refused)).toBe(0)
  })

  it('sends the rate-limit headers on 400, 401, 404 and 415 answers too', async () => {
    const ip = randomIp()
    const invalid = await send(ctx.app, ip, { method: 'POST', url: `${API}/auth/login`, payload: { email: 'not-an-email' } })
    expect(invalid.statusCode).toBe(400)
    expectRateHeaders(invalid, 3, 2)

    const unauthenticated = await login(ctx.app, ip)
    expect(unauthenticated.statusCode).toBe(401)
    expectRateHeaders(unauthenticated, 3, 1)

    const unknownRoute = await send(ctx.app, ip, { method: 'GET', url: `${API}/no-such-route` })
    expect(unknownRoute.statusCode).toBe(404)
    expectRateHeaders(unknownRoute, 4, 3)

    const anonymous = await me(ctx.app, ip)
    expect(anonymous.statusCode).toBe(401)
    expectRateHeaders(anonymous, 4, 2)

    const wrongType = await send(ctx.app, randomIp(), { method: 'POST', url: `${API}/auth/login`, headers: { 'content-type': 'application/xml' }, payload: '<x/>' })
    expect(wrongType.statusCode).toBe(415)
    expectRateHeaders(wrongType, 3, 2)
  })

  it('sends X-RateLimit-Reset as an absolute Unix time in seconds within the window', async () => {
    const ip = randomIp()
    for (const call of [() => login(ctx.app, ip), () => me(ctx.app, ip, alice.accessToken)]) {
      const before = Date.now() / 1000
      const response = await call()
      const after = Date.now() / 1000
      const reset = Number(response.headers['x-ratelimit-reset'])
      expect(Number.isInteger(reset)).toBe(true)
      expect(reset).toBeGreaterThanOrEqual(Math.floor(before))
      expect(reset).toBeLessThanOrEqual(after + 61)
    }
  })

  it('keeps X-RateLimit-Reset absolute on a 429 answer', async () => {
    const ip = randomIp()
    for (let attempt = 0; attempt < 3; attempt++) await login(ctx.app, ip)
    const before = Date.now() / 1000
    const refused = await login(ctx.app, ip)
    const after = Date.now() / 1000
    expect(refused.statusCode).toBe(429)
    const reset = Number(refused.headers['x-ratelimit-reset'])
    expect(reset).toBeGreaterThanOrEqual(Math.floor(before))
    expect(reset).toBeLessThanOrEqual(after + 61)
  })

  it('counts general routes per user: two users behind one IP have separate budgets', async () => {
    const ip = randomIp()
    const [carol, dave] = [await createUser(ctx), await createUser(ctx)]
    const carolCounts: number[] = []
    for (let attempt = 0; attempt < 4; attempt++) {
      const response = await me(ctx.app, ip, carol.accessToken)
      expect(response.statusCode).toBe(200)
      carolCounts.push(remaining(response))
    }
    expect(carolCounts).toEqual([3, 2, 1, 0])
    expectRateLimited(await me(ctx.app, ip, carol.accessToken), 4)

    const daves = await me(ctx.app, ip, dave.accessToken)
    expect(daves.statusCode).toBe(200)
    expect(remaining(daves)).toBe(3)
  })

  it('follows a user across IPs on general routes', async () => {
    const user = await createUser(ctx)
    for (let attempt = 0; attempt < 4; attempt++) expect((await me(ctx.app, randomIp(), user.accessToken)).statusCode).toBe(200)
    expectRateLimited(await me(ctx.app, randomIp(), user.accessToken), 4)
  })

  it('counts anonymous general requests per IP', async () => {
    const ip = randomIp()
    for (let attempt = 0; attempt < 4; attempt++) expect((await me(ctx.app, ip)).statusCode).toBe(401)
    expectRateLimited(await me(ctx.app, ip), 4)
    // An invalid token is no identity: it counts against the same IP budget.
    expectRateLimited(await me(ctx.app, ip, 'not-a-valid-token'), 4)

    expect((await me(ctx.app, randomIp())).statusCode).toBe(401)
    const user = await createUser(ctx)
    expect((await me(ctx.app, ip, user.accessToken)).statusCode).toBe(200)
  })

  it('keeps the authentication and general budgets separate', async () => {
    const ip = randomIp()
    for (let attempt = 0; attempt < 3; attempt++) await login(ctx.app, ip)
    expect((await login(ctx.app, ip)).statusCode).toBe(429)

    const general = await me(ctx.app, ip)
    expect(general.statusCode).toBe(401)
    expect(general.headers['x-ratelimit-limit']).toBe('4')
    expect(remaining(general)).toBe(3)

    const otherIp = randomIp()
    for (let attempt = 0; attempt < 4; attempt++) await me(ctx.app, otherIp)
    expect((await me(ctx.app, otherIp)).statusCode).toBe(429)
    const auth = await login(ctx.app, otherIp)
    expect(auth.statusCode).toBe(401)
    expect(remaining(auth)).toBe(2)
  })

  it('counts uploads per user in a budget of their own', async () => {
    const ip = randomIp()
    const [erin, frank] = [await createUser(ctx), await createUser(ctx)]
    // The limiter runs before the body is read, so even a request without a file counts.
    const upload = (user: TestUser) => send(ctx.app, ip, { method: 'POST', url: `${API}/uploads`, token: user.accessToken })
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await upload(erin)
      expect(response.statusCode).not.toBe(429)
      expect(response.headers['x-ratelimit-limit']).toBe('2')
    }
    expectRateLimited(await upload(erin), 2)

    const avatar = await send(ctx.app, ip, { method: 'POST', url: `${API}/users/me/avatar`, token: erin.accessToken })
    expectRateLimited(avatar, 2)

    expect((await upload(frank)).statusCode).not.toBe(429)
    const general = await me(ctx.app, ip, erin.accessToken)
    expect(general.statusCode).toBe(200)
    expect(general.headers['x-ratelimit-limit']).toBe('4')
    expect(remaining(general)).toBe(3)
  })

  it('exempts /health and /ready from rate limits', async () => {
    const ip = randomIp()
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await send(ctx.app, ip, { method: 'GET', url: '/health' })).statusCode).toBe(200)
      expect((await send(ctx.app, ip, { method: 'GET', url: '/ready' })).statusCode).toBe(200)
    }
    // The probes did not use up the general budget of that IP either.
    expect(remaining(await me(ctx.app, ip))).toBe(3)
  })
})

describe.runIf(TEST_REDIS_URL)('rate limits shared by instances through Redis', () => {
  const instances = twoInstances({ ...LIMITS, REDIS_URL: TEST_REDIS_URL })
  let user: TestUser
  beforeAll(async () => {
    user = await createUser(instances.first)
    // An instance counts only once its Redis connection is up; until then requests pass uncounted.
    for (const ctx of [instances.first, instances.second]) await vi.waitFor(async () => expect(remaining(await login(ctx.app, randomIp()))).toBe(2))
  })

  it('shares one authentication count between two instances', async () => {
    const ip = randomIp()
    const a1 = await login(instances.first.app, ip)
    const a2 = await login(instances.first.app, ip)
    const b1 = await login(instances.second.app, ip)
    expect([a1.statusCode, a2.statusCode, b1.statusCode]).toEqual([401, 401, 401])
    expect([a1, a2, b1].map(remaining)).toEqual([2, 1, 0])
    expectRateLimited(await login(instances.first.app, ip), 3)
    expectRateLimited(await login(instances.second.app, ip), 3)
    expect((await login(instances.second.app, randomIp())).statusCode).toBe(401)
  })

  it('shares one per-user general count between two instances', async () => {
    const ip = randomIp()
    expect((await me(instances.first.app, ip, user.accessToken)).statusCode).toBe(200)
    expect((await me(instances.second.app, randomIp(), user.accessToken)).statusCode).toBe(200)
    expect((await me(instances.first.app, randomIp(), user.accessToken)).statusCode).toBe(200)
    const fourth = await me(instances.second.app, ip, user.accessToken)
    expect(fourth.statusCode).toBe(200)
    expect(remaining(fourth)).toBe(0)
    expectRateLimited(await me(instances.first.app, ip, user.accessToken), 4)
  })

  it('sends an absolute X-RateLimit-Reset from the Redis store too', async () => {
    const before = Date.now() / 1000
    const response = await login(instances.second.app, randomIp())
    const after = Date.now() / 1000
    const reset = Number(response.headers['x-ratelimit-reset'])
    expect(Number.isInteger(reset)).toBe(true)
    expect(reset).toBeGreaterThanOrEqual(Math.floor(before))
    expect(reset).toBeLessThanOrEqual(after + 61)
  })
})

describe('rate limits when Redis is unreachable', () => {
  let ctx: TestContext
  const logs: string[] = []
  beforeAll(async () => {
    const logStream = new PassThrough()
    logStream.on('data', (line: Buffer) => logs.push(line.toString()))
    // Nothing listens on port 1 of the loopback: every connection is refused.
    ctx = await createTestApp({ env: { ...LIMITS, REDIS_URL: 'redis://127.0.0.1:1', LOG_LEVEL: 'warn' }, logStream })
  })
  afterAll(() => ctx.close())

  it('reports the degraded state in /ready, before any request had to fall back, while still answering 200', async () => {
    const ready = await ctx.app.inject({ method: 'GET', url: '/ready' })
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({ success: true, data: { status: 'ready', checks: { database: 'ok', rateLimits: 'degraded' } } })
  })

  it('keeps limiting by counting in the process, with headers that tell the count really applied', async () => {
    const ip = randomIp()
    const answers = []
    for (let attempt = 0; attempt < 3; attempt++) answers.push(await login(ctx.app, ip))
    expect(answers.map((answer) => answer.statusCode)).toEqual([401, 401, 401])
    expect(answers.map(remaining)).toEqual([2, 1, 0])
    for (const answer of answers) expect(answer.headers['x-ratelimit-limit']).toBe('3')
    expectRateLimited(await login(ctx.app, ip), 3)
  })

  it('says in the 429 message what the limit is and when it resets', async () => {
    const ip = randomIp()
    for (let attempt = 0; attempt < 3; attempt++) await login(ctx.app, ip)
    const refused = await login(ctx.app, ip)
    expect(refused.json<ErrorJson>().error.message).toMatch(/^Too many authentication requests: the limit is 3 per 60 seconds; retry in \d+ seconds$/)
  })

  it('warns in the log that limits are counted per process, once, not once per request', () => {
    const warnings = logs.filter((line) => line.includes('Redis is unreachable'))
    expect(warnings).toHaveLength(1)
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40 })
  })
})
