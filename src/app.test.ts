import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from './app.ts'
import { ManualClock } from './lib/clock.ts'
import { unique } from '../test/factories/users.ts'
import { API, createTestApp, MemoryMailer, openTestDatabase, request, testConfig, type ErrorJson, type TestContext } from '../test/setup/test-app.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

// Deprecation warnings are emitted once per process: collected from the first app built here on.
const warnings: Error[] = []
process.on('warning', (warning) => warnings.push(warning))

describe('HTTP platform', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  describe('health probes', () => {
    it('answers GET /health with the success envelope', async () => {
      const response = await ctx.app.inject({ method: 'GET', url: '/health' })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { status: 'ok' } })
    })

    it('answers GET /ready with the success envelope when the database answers', async () => {
      const response = await ctx.app.inject({ method: 'GET', url: '/ready' })
      expect(response.statusCode).toBe(200)
      // Without REDIS_URL rate limits are counted in the process by design (`local`), not `degraded`.
      expect(response.json()).toEqual({ success: true, data: { status: 'ready', checks: { database: 'ok', rateLimits: ctx.config.redisUrl ? 'shared' : 'local' } } })
    })
  })

  describe('headers on every answer', () => {
    const answers = () => [
      ctx.app.inject({ method: 'GET', url: '/health' }),
      request(ctx.app, { method: 'GET', url: '/auth/check-email?email=someone@example.test' }),
      request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'bad' } }),
      request(ctx.app, { method: 'GET', url: '/users/me' }),
      ctx.app.inject({ method: 'GET', url: '/no-such-route' }),
      request(ctx.app, { method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: '{oops' }),
    ]

    it('sends API-Version: 1 on success and error answers', async () => {
      const responses = await Promise.all(answers())
      expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 400, 401, 404, 400])
      for (const response of responses) expect(response.headers['api-version']).toBe('1')
    })

    it('sends a fresh X-Request-Id on every answer when none is given', async () => {
      const responses = await Promise.all(answers())
      const ids = responses.map((response) => response.headers['x-request-id'])
      for (const id of ids) expect(id).toMatch(UUID)
      expect(new Set(ids).size).toBe(ids.length)
    })

    it('echoes a well-formed incoming X-Request-Id', async () => {
      for (const id of ['req-42', 'edge.lb-1:7f3a_9', 'a'.repeat(128)]) {
        const response = await ctx.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': id } })
        expect(response.headers['x-request-id']).toBe(id)
      }
      const failed = await request(ctx.app, { method: 'GET', url: '/users/me', headers: { 'x-request-id': 'trace-401' } })
      expect(failed.statusCode).toBe(401)
      expect(failed.headers['x-request-id']).toBe('trace-401')
    })

    it('replaces a malformed incoming X-Request-Id with a fresh one', async () => {
      for (const id of ['a'.repeat(300), 'a'.repeat(129), 'has spaces in it', 'x\u00e9y', '<script>', '']) {
        const response = await ctx.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': id } })
        expect(response.headers['x-request-id']).not.toBe(id)
        expect(response.headers['x-request-id']).toMatch(UUID)
      }
    })

    it('sends security headers on success and error answers', async () => {
      const responses = await Promise.all(answers())
      for (const response of responses) {
        expect(response.headers['x-content-type-options']).toBe('nosniff')
        expect(response.headers['x-frame-options']).toMatch(/^(DENY|SAMEORIGIN)$/)
        // A JSON answer loads nothing and may be framed by nothing.
        expect(response.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'")
      }
    })
  })

  describe('headers only documents act on', () => {
    const DOCUMENT_ONLY = ['cross-origin-opener-policy', 'origin-agent-cluster', 'referrer-policy', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection']

    it('leaves them off JSON answers, success and error alike, which keep the rest', async () => {
      const responses = await Promise.all([
        ctx.app.inject({ method: 'GET', url: '/health' }),
        request(ctx.app, { method: 'GET', url: '/categories' }),
        request(ctx.app, { method: 'GET', url: '/users/me' }),
        ctx.app.inject({ method: 'GET', url: '/no-such-route' }),
      ])
      expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 401, 404])
      for (const response of responses) {
        expect(response.headers['content-type']).toMatch(/^application\/json/)
        for (const name of DOCUMENT_ONLY) expect(response.headers[name]).toBeUndefined()
        expect(response.headers['x-content-type-options']).toBe('nosniff')
        expect(response.headers['cross-origin-resource-policy']).toBe('cross-origin')
      }
    })

    it('sends them with pages and other answers that are not JSON, without replacing what a route set', async () => {
      const page = await ctx.app.inject({ method: 'GET', url: '/activate' })
      const docs = await ctx.app.inject({ method: 'GET', url: '/docs/' })
      const unchanged = await request(ctx.app, { method: 'GET', url: '/categories', headers: { 'if-none-match': '*' } })
      expect([page.statusCode, docs.statusCode, unchanged.statusCode]).toEqual([400, 200, 304])
      expect(page.headers['content-type']).toMatch(/^text\/html/)
      expect(docs.headers['content-type']).toMatch(/^text\/html/)
      for (const response of [page, docs, unchanged]) {
        for (const name of DOCUMENT_ONLY) expect(response.headers[name], name).toBeDefined()
        expect(response.headers['x-frame-options']).toMatch(/^(DENY|SAMEORIGIN)$/)
      }
      expect(docs.headers['cross-origin-opener-policy']).toBe('same-origin')
      expect(page.headers['referrer-policy']).toBe('no-referrer')
      // A page's policy says what it may load; the reference sets its own (for the scripts it
      // ships); a 304 carries none, so that a cache keeps the policy of the answer it holds.
      const csp = String(page.headers['content-security-policy'])
      expect(csp).toContain("default-src 'self'")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(csp).toContain("object-src 'none'")
      expect(String(docs.headers['content-security-policy'])).toContain('validator.swagger.io')
      expect(unchanged.headers['content-security-policy']).toBeUndefined()
    })
  })

  describe('OpenAPI document and docs page', () => {
    type Operation = { summary?: string; security?: unknown[]; responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }> }
    let document: { openapi: string; paths: Record<string, Record<string, Operation>>; components?: Record<string, unknown>; info?: { version: string; description: string } }

    const OPERATIONS: [method: string, path: string, success: string, guarded: boolean][] = [
      ['post', '/auth/register', '201', false],
      ['post', '/auth/activate', '200', false],
      ['post', '/auth/activation/resend', '200', false],
      ['post', '/auth/login', '200', false],
      ['post', '/auth/refresh', '200', false],
      ['post', '/auth/logout', '200', true],
      ['post', '/auth/forgot-password', '200', false],
      ['post', '/auth/password-reset/ask', '200', false],
      ['post', '/auth/reset-password', '200', false],
      ['post', '/auth/password-reset', '200', false],
      ['get', '/auth/check-email', '200', false],
      ['get', '/users/me', '200', true],
      ['put', '/users/me', '200', true],
      ['patch', '/users/me', '200', true],
      ['get', '/users', '200', true],
      ['get', '/admin/roles', '200', true],
      ['post', '/admin/roles', '201', true],
      ['get', '/admin/roles/{roleId}', '200', true],
      ['put', '/admin/roles/{roleId}', '200', true],
      ['delete', '/admin/roles/{roleId}', '200', true],
      ['post', '/admin/staff', '201', true],
      ['put', '/admin/staff/{userId}/roles', '200', true],
      ['post', '/admin/users/{userId}/deactivate', '200', true],
      ['post', '/admin/users/{userId}/reactivate', '200', true],
    ]

    beforeAll(async () => {
      const response = await request(ctx.app, { method: 'GET', url: '/openapi.json' })
      expect(response.statusCode).toBe(200)
      document = response.json()
    })

    it('serves an OpenAPI 3.1 document at /api/v1/openapi.json', () => {
      expect(document.openapi).toMatch(/^3\.1\.\d+$/)
      expect(document.components?.securitySchemes).toMatchObject({ bearerAuth: { type: 'http', scheme: 'bearer' } })
    })

    it.each(OPERATIONS)('documents %s %s with a summary and its success response schema', (method, path, success, guarded) => {
      const operation = document.paths[`${API}${path}`]?.[method]
      expect(operation, `${method} ${path}`).toBeDefined()
      expect(operation?.summary?.length).toBeGreaterThan(0)
      const schema = operation?.responses?.[success]?.content?.['application/json']?.schema
      expect(schema, `${method} ${path} ${success}`).toBeDefined()
      expect(schema?.properties).toHaveProperty('success')
      expect(schema?.properties).toHaveProperty('data')
      expect(operation?.responses).toHaveProperty('429')
      if (guarded) expect(operation?.security).toEqual([{ bearerAuth: [] }])
    })

    it('gives every documented operation a summary, a success response and the 429 answer', () => {
      const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))
      expect(operations.length).toBeGreaterThanOrEqual(OPERATIONS.length)
      for (const { path, method, operation } of operations) {
        expect(operation.summary, `${method} ${path}`).toBeTruthy()
        expect(Object.keys(operation.responses ?? {}).some((status) => status.startsWith('2')), `${method} ${path}`).toBe(true)
        if (path !== '/health' && path !== '/ready') expect(operation.responses, `${method} ${path}`).toHaveProperty('429')
      }
    })

    it('answers GET /api/v1 with an index that links to the reference', async () => {
      for (const url of [API, `${API}/`]) {
        const response = await ctx.app.inject({ method: 'GET', url })
        expect(response.statusCode, url).toBe(200)
        const { data } = response.json()
        expect(data).toEqual({
          name: 'Marketplace API',
          version: expect.stringMatching(/^\d+\.\d+\.\d+/),
          links: {
            self: `${ctx.config.publicUrl}${API}`,
            docs: `${ctx.config.publicUrl}/docs`,
            openapi: `${ctx.config.publicUrl}${API}/openapi.json`,
            health: `${ctx.config.publicUrl}/health`,
            ready: `${ctx.config.publicUrl}/ready`,
          },
        })
        expect(data.version).toBe(document.info?.version)
      }
    })

    it("lists every module's error codes in the reference, and a route's codes on its status", () => {
      const description = (document.info as { description: string }).description
      for (const code of ['VALIDATION_ERROR', 'NOT_FOUND', 'RATE_LIMITED', 'INVALID_TRANSITION', 'CATEGORY_IN_USE', 'TOKEN_USED', 'PORTFOLIO_LIMIT_REACHED', 'CANNOT_MODIFY_SELF']) {
        expect(description).toMatch(new RegExp(`\\| \`${code}\` \\| \\d{3} \\|`))
      }
      const approve = document.paths[`${API}/admin/services/{serviceId}/approve`]?.post as { responses: Record<string, { description: string }> }
      expect(approve.responses['422']?.description).toMatch(/^`INVALID_TRANSITION`: /)
    })

    it('builds the app without framework deprecation warnings', () => {
      expect(warnings.filter((warning) => warning.name === 'FastifyWarning' || /FSTDEP/.test(String((warning as { code?: string }).code)))).toEqual([])
    })

    it('documents the health probes but not the document itself', () => {
      expect(document.paths['/health']?.get?.summary).toBeTruthy()
      expect(document.paths['/ready']?.get?.summary).toBeTruthy()
      expect(document.paths[`${API}/openapi.json`]).toBeUndefined()
    })

    it('serves the interactive docs as an HTML page', async () => {
      let response = await ctx.app.inject({ method: 'GET', url: '/docs' })
      if (response.statusCode >= 300 && response.statusCode < 400) {
        response = await ctx.app.inject({ method: 'GET', url: new URL(String(response.headers.location), 'http://localhost/docs').pathname })
      }
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toMatch(/^text\/html/)
      expect(response.body).toMatch(/<html/i)
      expect((await ctx.app.inject({ method: 'GET', url: '/docs/' })).statusCode).toBe(200)
    })
  })
})

describe('readiness without a database', () => {
  it('answers GET /ready with 503 in the error envelope when the database is gone, while /health still answers', async () => {
    const { database, drop } = await openTestDatabase()
    const app = await buildApp({ config: testConfig(), database, mailer: new MemoryMailer(), clock: new ManualClock() })
    await app.ready()
    try {
      await drop()
      const ready = await app.inject({ method: 'GET', url: '/ready' })
      expect(ready.statusCode).toBe(503)
      const body = ready.json<ErrorJson>()
      expect(body).toMatchObject({ success: false, error: { code: 'NOT_READY', details: [] } })
      expect(body.error.message.length).toBeGreaterThan(0)
      const health = await app.inject({ method: 'GET', url: '/health' })
      expect(health.statusCode).toBe(200)
    } finally {
      await app.close()
    }
  })
})

describe('CORS', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { CORS_ORIGINS: 'https://shop.example' } })
  })
  afterAll(() => ctx.close())

  const preflight = (origin: string) =>
    ctx.app.inject({
      method: 'OPTIONS',
      url: `${API}/auth/login`,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
    })

  it('allows a preflight from a configured origin', async () => {
    const response = await preflight('https://shop.example')
    expect(response.statusCode).toBeLessThan(300)
    expect(response.headers['access-control-allow-origin']).toBe('https://shop.example')
    expect(String(response.headers['access-control-allow-methods'])).toContain('POST')
  })

  it('gives no Access-Control-Allow-Origin to a preflight from another origin', async () => {
    const response = await preflight('https://evil.example')
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('exposes the request id, API version and rate-limit headers to the allowed origin', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://shop.example' } })
    expect(response.headers['access-control-allow-origin']).toBe('https://shop.example')
    const exposed = String(response.headers['access-control-expose-headers']).toLowerCase()
    for (const header of ['x-request-id', 'api-version', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
      expect(exposed).toContain(header)
    }
    const foreign = await ctx.app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://evil.example' } })
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('CORS, every origin allowed (the default)', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { CORS_ORIGINS: '*' } })
  })
  afterAll(() => ctx.close())

  it('answers a preflight to any path with the methods, the headers asked for and how long to keep them', async () => {
    for (const url of [`${API}/auth/login`, `${API}/services/${'0'.repeat(8)}`, '/health']) {
      const response = await ctx.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'content-type,authorization' },
      })
      expect(response.statusCode, url).toBe(204)
      expect(response.headers['access-control-allow-origin']).toBe('*')
      expect(String(response.headers['access-control-allow-methods']).split(', ')).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
      expect(response.headers['access-control-allow-headers']).toBe('content-type,authorization')
      expect(response.headers['access-control-max-age']).toBe('600')
    }
  })

  it('lets any origin read every answer, a refusal or a 404 as well, with the headers it exposes', async () => {
    const answers = [
      await ctx.app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://anywhere.example' } }),
      await ctx.app.inject({ method: 'GET', url: `${API}/users/me`, headers: { origin: 'https://anywhere.example' } }),
      await ctx.app.inject({ method: 'GET', url: `${API}/no-such-path` }),
      await ctx.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'content-type': 'application/json' }, payload: '{}' }),
    ]
    expect(answers.map((response) => response.statusCode)).toEqual([200, 401, 404, 400])
    for (const response of answers) {
      expect(response.headers['access-control-allow-origin']).toBe('*')
      const exposed = String(response.headers['access-control-expose-headers']).toLowerCase().split(', ')
      expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'api-version', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'allow']))
      // A wildcard origin needs no `Vary: Origin`: the answer is the same for every origin.
      expect(String(response.headers.vary)).not.toMatch(/origin/i)
    }
  })
})

describe('log redaction', () => {
  const PASSWORD = 'Sup3rSecret-Passw0rd'
  const BEARER = 'secret-token-value'
  const chunks: string[] = []
  const logText = () => chunks.join('')
  let ctx: TestContext
  beforeAll(async () => {
    const logStream = new PassThrough()
    logStream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')))
    ctx = await createTestApp({ env: { LOG_LEVEL: 'info' }, logStream })
  })
  afterAll(() => ctx.close())

  it('logs request ids but never passwords, bearer tokens or token query values', async () => {
    const email = `${unique('log')}@example.test`
    const ids: string[] = []
    const track = <T extends { headers: Record<string, unknown> }>(response: T): T => {
      ids.push(String(response.headers['x-request-id']))
      return response
    }

    const registered = track(await request(ctx.app, { method: 'POST', url: '/auth/register', payload: { email, password: PASSWORD, fullName: 'Log Reader' } }))
    expect(registered.statusCode).toBe(201)
    await ctx.app.container.worker.drain()
    const activationToken = ctx.mailer.tokenTo(email)
    track(await request(ctx.app, { method: 'POST', url: '/auth/activate', payload: { token: activationToken } }))
    const login = track(await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email, password: PASSWORD } }))
    expect(login.statusCode).toBe(200)
    const { accessToken, refreshToken } = login.json().data
    track(await request(ctx.app, { method: 'GET', url: '/users/me', token: accessToken }))
    const refused = track(await request(ctx.app, { method: 'GET', url: '/users/me', headers: { authorization: `Bearer ${BEARER}` } }))
    expect(refused.statusCode).toBe(401)
    track(await request(ctx.app, { method: 'GET', url: '/auth/check-email?email=a@b.co&token=abc' }))
    track(await request(ctx.app, { method: 'GET', url: `/auth/check-email?email=a@b.co&refreshToken=${refreshToken}` }))

    await vi.waitFor(() => {
      for (const id of ids) expect(logText()).toContain(`"requestId":"${id}"`)
      expect(logText().match(/request completed/g)?.length ?? 0).toBeGreaterThanOrEqual(ids.length)
    })
    const logs = logText()
    expect(logs).not.toContain(PASSWORD)
    expect(logs).not.toContain(BEARER)
    expect(logs).not.toContain(accessToken)
    expect(logs).not.toContain(refreshToken)
    expect(logs).not.toContain(activationToken)
    expect(logs).not.toContain('token=abc')
    expect(logs).toContain('token=[redacted]')
    expect(logs).toContain('refreshToken=[redacted]')
  })
})

describe('graceful shutdown', () => {
  it('finishes a request in flight when closing, then refuses new connections', async () => {
    const { database, drop } = await openTestDatabase()
    const app = await buildApp({ config: testConfig(), database, mailer: new MemoryMailer(), clock: new ManualClock() })
    let closing: Promise<void> | undefined
    try {
      let arrived!: () => void
      const inFlight = new Promise<void>((resolve) => (arrived = resolve))
      app.get('/slow', async () => {
        arrived()
        await new Promise((resolve) => setTimeout(resolve, 300))
        return { success: true, data: { finished: true } }
      })
      await app.ready()
      await app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = app.server.address() as AddressInfo
      const base = `http://127.0.0.1:${port}`

      // fetch keeps connections alive, as browsers and HTTP client pools do.
      const pending = fetch(`${base}/slow`)
      await inFlight
      closing = app.close()

      const response = await pending
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ success: true, data: { finished: true } })
      // Otherwise the idle keep-alive connection holds close() open until its keep-alive timeout.
      expect(response.headers.get('connection')).toBe('close')
      await closing

      await expect(fetch(`${base}/health`)).rejects.toThrow()
    } finally {
      // Only needed when an assertion above failed: do not leave the server waiting on a socket.
      app.server.closeAllConnections()
      await (closing ?? app.close())
      await drop()
    }
  })
})
