import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createSuperuser, createUser, type TestUser } from '../../test/factories/users.ts'
import { API, createTestApp, expectError, request, type ErrorJson, type TestContext } from '../../test/setup/test-app.ts'
import { guardLimits, MAX_BODY_DEPTH, MAX_DETAILS } from './validation.ts'

/**
 * The strings every regular expression of the process was run over while `work` ran. The cost of
 * validation is measured by what it does (which values a pattern or format reads, how many
 * problems it finds), not by the clock, so a busy machine does not change the answer.
 */
async function regexInputsDuring<T>(work: () => Promise<T>): Promise<{ result: T; inputs: Set<string> }> {
  const inputs = new Set<string>()
  const record = (input: unknown) => {
    if (typeof input === 'string') inputs.add(input)
  }
  const test = vi.spyOn(RegExp.prototype, 'test').mockImplementation(function (this: RegExp, input: string) {
    record(input)
    return RegExp.prototype.exec.call(this, input) !== null
  })
  const exec = vi.spyOn(RegExp.prototype, 'exec')
  try {
    const result = await work()
    for (const [input] of exec.mock.calls) record(input)
    return { result, inputs }
  } finally {
    test.mockRestore()
    exec.mockRestore()
  }
}

const integers = (count: number) => Array.from({ length: count }, (_, index) => index % 10)

describe('request validation under hostile input', () => {
  let ctx: TestContext
  let user: TestUser
  let admin: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    user = await createUser(ctx)
    admin = await createSuperuser(ctx)
  })
  afterAll(() => ctx.close())

  describe('arrays far past maxItems are refused without per-element work', () => {
    const cases: { name: string; method: 'POST' | 'PUT'; url: () => string; token: () => string; payload: object; field: string }[] = [
      { name: 'tags of POST /services (64,000 integers)', method: 'POST', url: () => '/services', token: () => user.accessToken, payload: { title: 'Logo design', tags: integers(64_000) }, field: 'tags' },
      {
        name: 'permissions of POST /admin/roles (100,000 items)',
        method: 'POST',
        url: () => '/admin/roles',
        token: () => admin.accessToken,
        payload: { name: 'Flood', permissions: integers(100_000).map((n) => `perm_${n}`) },
        field: 'permissions',
      },
      {
        name: 'technologies of POST /users/me/projects (100,000 integers)',
        method: 'POST',
        url: () => '/users/me/projects',
        token: () => user.accessToken,
        payload: { title: 'Flood', technologies: integers(100_000) },
        field: 'technologies',
      },
      {
        name: 'imageIds of PUT /services/{id}/images/order (60,000 strings)',
        method: 'PUT',
        url: () => `/services/${randomUUID()}/images/order`,
        token: () => user.accessToken,
        payload: { imageIds: integers(60_000).map(String) },
        field: 'imageIds',
      },
    ]

    for (const testCase of cases) {
      it(`answers ${testCase.name} with 400 on the array, without looking at its elements`, async () => {
        const result = await request(ctx.app, { method: testCase.method, url: testCase.url(), token: testCase.token(), payload: testCase.payload })
        expectError(result, 400, 'VALIDATION_ERROR')
        const error = result.json<ErrorJson>().error
        expect(error.details).toContainEqual({ field: testCase.field, message: expect.stringMatching(/more than \d+ items/) })
        // Every element is of the wrong type: had validation visited them, each would be a problem
        // (`tags.0`, `tags.1`, ...), listed or counted in the message. One problem for the array.
        expect(error.details.filter((detail) => detail.field.startsWith(`${testCase.field}.`))).toEqual([])
        expect(error.message).toBe('The request is invalid')
        expect(result.body.length).toBeLessThan(4096)
      })
    }

    it('keeps /health answering while such a request is validated', async () => {
      const flood = request(ctx.app, { method: 'POST', url: '/services', token: user.accessToken, payload: { tags: integers(64_000) } })
      const health = ctx.app.inject({ method: 'GET', url: '/health' })
      const [floodAnswer, healthAnswer] = await Promise.all([flood, health])
      expect(healthAnswer.statusCode).toBe(200)
      expect(floodAnswer.statusCode).toBe(400)
    })
  })

  it('lists at most 20 details and says how many more there are', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 40_000 }, (_, index) => [`field${index}`, index]))
    const result = await request(ctx.app, { method: 'PATCH', url: '/users/me', token: user.accessToken, payload: unknown })
    expectError(result, 400, 'VALIDATION_ERROR')
    const error = result.json<ErrorJson>().error
    expect(error.details).toHaveLength(MAX_DETAILS)
    expect(error.details[0]).toEqual({ field: 'field0', message: 'is not an accepted field' })
    // Exactly one problem per field: each was looked at once.
    expect(error.message).toBe(`The request is invalid (${40_000 - MAX_DETAILS} more problems are not listed)`)
  })

  it('does not run a pattern over a string already past its maxLength (an e-mail of 800 KB)', async () => {
    // `a@a.a.a. ... @` backtracks quadratically in the e-mail pattern: it must never reach it.
    const email = `a@${'a.'.repeat(400_000)}@`
    const { result, inputs } = await regexInputsDuring(() => request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email, password: 'Secret123' } }))
    expectError(result, 400, 'VALIDATION_ERROR', ['email'])
    // The body's raw text is scanned once by the JSON parser (linear); the value itself never is.
    expect(inputs.has(email)).toBe(false)
    expect([...inputs].some((input) => input.includes('a@a.a.'))).toBe(true)
  })

  it('still names every bad field of a normal body at once', async () => {
    const response = await request(ctx.app, { method: 'PATCH', url: '/users/me', token: user.accessToken, payload: { title: 'x'.repeat(101), phone: 'call me' } })
    expectError(response, 400, 'VALIDATION_ERROR', ['phone', 'title'])
  })

  describe('bodies that are not what a handler can read', () => {
    const deeplyNested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`

    it('answers JSON nested 10,000 levels deep (60 KB) on anonymous login with 400 on `body`', async () => {
      const payload = deeplyNested(10_000)
      expect(payload.length).toBeGreaterThan(60_000)
      const response = await ctx.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'content-type': 'application/json' }, payload })
      expectError(response, 400, 'VALIDATION_ERROR', ['body'])
      expect(response.json<ErrorJson>().error.details[0]!.message).toBe(`is nested too deeply (at most ${MAX_BODY_DEPTH} levels)`)
    })

    it('answers deep nesting inside a field of an authenticated route with 400 too', async () => {
      const payload = `{"title":${deeplyNested(5_000)}}`
      const response = await ctx.app.inject({
        method: 'PATCH',
        url: `${API}/users/me`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.accessToken}` },
        payload,
      })
      expectError(response, 400, 'VALIDATION_ERROR', ['body'])
    })

    const send = (method: 'POST' | 'PUT' | 'PATCH', url: string, token: string | undefined, payload: string | undefined, contentType?: string) =>
      ctx.app.inject({
        method,
        url: `${API}${url}`,
        headers: { ...(contentType && { 'content-type': contentType }), ...(token && { authorization: `Bearer ${token}` }) },
        ...(payload !== undefined && { payload }),
      })

    const multipart = (field: string, value: string) => {
      const boundary = 'x-boundary-1234'
      return {
        contentType: `multipart/form-data; boundary=${boundary}`,
        payload: `--${boundary}\r\nContent-Disposition: form-data; name="${field}"\r\n\r\n${value}\r\n--${boundary}--\r\n`,
      }
    }

    it('reads no body of a GET, whatever its content type says', async () => {
      const form = multipart('search', 'logo')
      const response = await ctx.app.inject({ method: 'GET', url: `${API}/services?limit=1`, headers: { 'content-type': form.contentType }, payload: form.payload })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data.items).toEqual(expect.any(Array))
    })

    // As for a JSON body that fails its schema: the caller is checked first, and a path with no
    // such route is 404 or 405 whatever the body.
    it('checks the caller before refusing a multipart body, and answers a path without the route first', async () => {
      const form = multipart('serviceId', 'x')
      expectError(await send('POST', '/orders', undefined, form.payload, form.contentType), 401, 'UNAUTHENTICATED')
      expectError(await send('POST', '/orders', user.accessToken, form.payload, form.contentType), 400, 'VALIDATION_ERROR', ['body'])
      expectError(await send('POST', '/no-such-route', undefined, form.payload, form.contentType), 404, 'NOT_FOUND')
      expectError(await send('PUT', '/services', user.accessToken, form.payload, form.contentType), 405, 'METHOD_NOT_ALLOWED')
    })

    it('answers POST /auth/refresh with a null body, no body, or a multipart body with 400 naming the field', async () => {
      expectError(await send('POST', '/auth/refresh', undefined, 'null', 'application/json'), 400, 'VALIDATION_ERROR', ['body'])
      expectError(await send('POST', '/auth/refresh', undefined, undefined), 400, 'VALIDATION_ERROR', ['refreshToken'])
      const form = multipart('refreshToken', 'abc')
      expectError(await send('POST', '/auth/refresh', undefined, form.payload, form.contentType), 400, 'VALIDATION_ERROR', ['body'])
    })

    for (const method of ['PUT', 'PATCH'] as const) {
      it(`answers ${method} /users/me with a null body, no body, or a multipart body with 400 naming the field, changing nothing`, async () => {
        const before = (await request(ctx.app, { method: 'GET', url: '/users/me', token: user.accessToken })).json().data
        expectError(await send(method, '/users/me', user.accessToken, 'null', 'application/json'), 400, 'VALIDATION_ERROR', ['body'])
        expectError(await send(method, '/users/me', user.accessToken, undefined), 400, 'VALIDATION_ERROR', ['body'])
        const form = multipart('fullName', 'Changed By Form')
        const refused = await send(method, '/users/me', user.accessToken, form.payload, form.contentType)
        expectError(refused, 400, 'VALIDATION_ERROR', ['body'])
        expect(refused.json<ErrorJson>().error.details[0]!.message).toMatch(/application\/json/)
        const after = (await request(ctx.app, { method: 'GET', url: '/users/me', token: user.accessToken })).json().data
        expect(after).toEqual(before)
      })
    }

    it('answers a JSON array or a bare value as a body with 400 on `body`', async () => {
      for (const payload of ['[]', '[{"email":"a@b.co"}]', '"text"', '42', 'true']) {
        expectError(await send('POST', '/auth/login', undefined, payload, 'application/json'), 400, 'VALIDATION_ERROR', ['body'])
      }
    })
  })

  describe('price filters beyond what the database holds', () => {
    let categoryId: string
    beforeAll(async () => {
      categoryId = (await request(ctx.app, { method: 'GET', url: '/categories' })).json().data[0].id
    })

    const expectBound = (response: LightMyRequestResponse, field: string) => {
      expectError(response, 400, 'VALIDATION_ERROR', [field])
      expect(response.json<ErrorJson>().error.details[0]!.message).toMatch(/1000000/)
    }

    for (const field of ['minPrice', 'maxPrice']) {
      for (const value of ['21474836.48', '1e308', 'Infinity', '1000000.01']) {
        it(`answers ${field}=${value} with 400 on ${field} on /services and on a category's services`, async () => {
          expectBound(await request(ctx.app, { method: 'GET', url: `/services?${field}=${value}` }), field)
          expectBound(await request(ctx.app, { method: 'GET', url: `/categories/${categoryId}/services?${field}=${value}` }), field)
        })
      }
    }

    it('accepts the bound itself', async () => {
      const response = await request(ctx.app, { method: 'GET', url: '/services?minPrice=0&maxPrice=1000000' })
      expect(response.statusCode).toBe(200)
    })
  })
})

describe('every route bounds what it accepts', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  /** Paths in a schema of strings without maxLength (or an enum, const or uuid format) and arrays without maxItems. */
  function unbounded(schema: unknown, path: string, found: string[]): string[] {
    if (typeof schema !== 'object' || schema === null) return found
    const node = schema as Record<string, unknown>
    const types = Array.isArray(node.type) ? node.type : [node.type]
    const isBoundedString = node.maxLength !== undefined || node.enum !== undefined || node.const !== undefined || node.format === 'uuid' || node.format === 'binary'
    if (types.includes('string') && !isBoundedString) found.push(path)
    if (types.includes('array') && node.maxItems === undefined) found.push(path)
    for (const [name, property] of Object.entries((node.properties as Record<string, unknown> | undefined) ?? {})) unbounded(property, `${path}.${name}`, found)
    if (node.items) unbounded(node.items, `${path}[]`, found)
    for (const combinator of ['anyOf', 'oneOf', 'allOf']) {
      for (const branch of (node[combinator] as unknown[] | undefined) ?? []) unbounded(branch, path, found)
    }
    return found
  }

  it('gives every string a maximum length and every array a maximum size in bodies, queries and paths', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json()
    const problems: string[] = []
    for (const [path, operations] of Object.entries<Record<string, Record<string, unknown>>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const content = (operation.requestBody as { content?: Record<string, { schema: unknown }> } | undefined)?.content ?? {}
        for (const [type, body] of Object.entries(content)) unbounded(body.schema, `${method} ${path} body(${type})`, problems)
        for (const parameter of (operation.parameters as { name: string; in: string; schema: unknown }[] | undefined) ?? []) {
          // Headers are bounded by Node (16 KB for all of them) and checked by the plugins that read them.
          if (parameter.in === 'header') continue
          unbounded(parameter.schema, `${method} ${path} ${parameter.in}.${parameter.name}`, problems)
        }
      }
    }
    expect(problems).toEqual([])
  })
})

describe('the uuid format', () => {
  let ctx: TestContext
  let user: TestUser
  let other: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    ;[user, other] = [await createUser(ctx), await createUser(ctx)]
  })
  afterAll(() => ctx.close())

  it('refuses an id with a urn:uuid: prefix, which the database cannot read: 400 naming the field in a body, 404 in a path', async () => {
    const urn = `urn:uuid:${other.user.id}`
    expectError(await request(ctx.app, { method: 'POST', url: '/messages', token: user.accessToken, payload: { recipientId: urn, content: 'Hello' } }), 400, 'VALIDATION_ERROR', ['recipientId'])
    expectError(await request(ctx.app, { method: 'GET', url: `/users/${urn}`, token: user.accessToken }), 404, 'NOT_FOUND')
  })

  it('takes an id in upper case, as the database reads it', async () => {
    const response = await request(ctx.app, { method: 'POST', url: '/messages', token: user.accessToken, payload: { recipientId: other.user.id.toUpperCase(), content: 'Hello' } })
    expect(response.statusCode, response.body).toBe(201)
  })
})

describe('guardLimits', () => {
  it('moves items and uniqueItems behind maxItems, and pattern and format behind maxLength', () => {
    const schema = {
      type: 'object',
      properties: {
        tags: { type: 'array', maxItems: 3, uniqueItems: true, items: { type: 'string', maxLength: 5, pattern: '^a' } },
        id: { type: 'string', maxLength: 36, format: 'uuid' },
      },
    }
    expect(guardLimits(schema)).toEqual({
      type: 'object',
      properties: {
        tags: {
          type: 'array',
          maxItems: 3,
          allOf: [{ if: { maxItems: 3 }, then: { uniqueItems: true, items: { type: 'string', maxLength: 5, allOf: [{ if: { maxLength: 5 }, then: { pattern: '^a' } }] } } }],
        },
        id: { type: 'string', maxLength: 36, allOf: [{ if: { maxLength: 36 }, then: { format: 'uuid' } }] },
      },
    })
  })

  it('keeps a second pattern, in an allOf branch of its own, behind maxLength too', () => {
    const schema = { type: 'string', maxLength: 10, pattern: '^a', allOf: [{ pattern: '^[^\\u0000]*$' }, { minLength: 1 }] }
    expect(guardLimits(schema)).toEqual({
      type: 'string',
      maxLength: 10,
      allOf: [{ minLength: 1 }, { if: { maxLength: 10 }, then: { allOf: [{ pattern: '^[^\\u0000]*$' }] } }, { if: { maxLength: 10 }, then: { pattern: '^a' } }],
    })
  })

  it('leaves schemas without limits as they are', () => {
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: '^x' } }, required: ['name'] }
    expect(guardLimits(schema)).toEqual(schema)
  })
})

