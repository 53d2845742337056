/**
 * Positive data: every operation of the served OpenAPI document, sent requests that the document
 * itself calls valid, never answers 400 (nor 5xx). For each operation the requests are its
 * documented body examples first, then bodies, query strings and headers drawn from its schemas
 * (fast-check, fixed seed), each kept only if the document's own schemas accept it, as a
 * schema-driven test tool would send them.
 *
 * What a schema cannot generate is given real values, as a client would have them: ids of rows
 * that exist, and the tokens the API issued (activation and reset tokens, refresh tokens). The few
 * rules JSON Schema cannot state (a comparison between two fields, a registry of phone numbers,
 * an age computed from today) are listed in RULES_BEYOND_SCHEMA with the exact field and message
 * they refuse with, and described in the operations' text; any other 400 fails the test.
 *
 *   npx vitest run test/flows/openapi-positive.test.ts
 *   POSITIVE_RUNS=20 ...    generated requests per operation (default 6), besides the examples
 *   POSITIVE_SEED=1 ...     another seed (default 20261124)
 *   POSITIVE_ONLY='POST /api/v1/services' ...   only the operations whose "METHOD path" contains this
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CENT_PRECISION } from '../../src/lib/money.ts'
import { fileForm } from '../factories/files.ts'
import { sendMessage } from '../factories/messages.ts'
import { createUser, unique } from '../factories/users.ts'
import { createFixtures, servedOperations, type Fixtures } from '../fuzz/fixtures.ts'
import { arbitraryFromSchema, operationName, type Operation, type Parameter, type Schema } from '../fuzz/openapi.ts'
import { createTestApp, request, type TestContext } from '../setup/test-app.ts'

const SEED = Number(process.env.POSITIVE_SEED ?? 20261124)
const RUNS = Number(process.env.POSITIVE_RUNS ?? 6)
const ONLY = process.env.POSITIVE_ONLY
/** Candidates drawn per operation; those the document refuses are dropped. */
const DRAWS = Math.max(40, RUNS * 6)

type Json = Record<string, unknown>

/**
 * Refusals of well-formed requests on rules JSON Schema cannot state. Each is described in its
 * operation's text; only a 400 whose every detail matches one of these (operation, field and
 * message) is accepted.
 */
const RULES_BEYOND_SCHEMA: { operation: RegExp; field: RegExp; message: RegExp; why: string }[] = [
  { operation: /\/users\/me\/(projects|experiences|education)/, field: /^endDate$/, message: /^must not be before startDate$/, why: 'a comparison of two fields' },
  { operation: /^GET .*\/services$/, field: /^minPrice$/, message: /^must not be more than maxPrice$/, why: 'a comparison of two parameters' },
  { operation: /^GET .*\/services$/, field: /^sortBy$/, message: /^relevance needs a search$/, why: 'one parameter needs another' },
  { operation: /^(PUT|PATCH) \/api\/v1\/users\/me$/, field: /^username$/, message: /^cannot be changed after registration$/, why: "only the account's own value is accepted" },
  { operation: /\/kyc\/step1$/, field: /^dateOfBirth$/, message: /at least 18 years ago/, why: 'an age counted from today' },
  { operation: /\/kyc\/step1$/, field: /^country$/, message: /ISO 3166-1 alpha-2/, why: 'a code the ISO registry has assigned' },
  { operation: /\/kyc\/step1$/, field: /^phone$/, message: /valid phone number/, why: "a number valid in its country's numbering plan" },
  { operation: /./, field: /^(email|username|slug|name)$/, message: /already/, why: 'unique among the rows that exist' },
  { operation: /^PUT \/api\/v1\/services\/\{serviceId\}$/, field: /^imageIds$/, message: /^a gallery holds at most 10 images/, why: 'a room counted over the images the service already has' },
]

interface Sent {
  url: string
  headers: Record<string, string>
  body?: unknown
  note: string
}

const ajv = new Ajv2020({ strict: false, allErrors: true, multipleOfPrecision: CENT_PRECISION })
addFormats.default(ajv)
// Formats the document states for readers.
for (const format of ['int32', 'int64', 'binary']) ajv.addFormat(format, true)
const validators = new WeakMap<object, ValidateFunction>()
const accepts = (schema: Schema, value: unknown): boolean => {
  let validate = validators.get(schema)
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)))
  return validate(value)
}

describe('positive data: requests the OpenAPI document calls valid are not refused with 400', () => {
  let ctx: TestContext
  let operations: Operation[] = []
  let fixtures: Fixtures
  let conversationId: string

  beforeAll(async () => {
    ctx = await createTestApp()
    operations = await servedOperations(ctx)
    fixtures = await createFixtures(ctx)
    ;({ conversationId } = await sendMessage(ctx, fixtures.other, { recipientId: fixtures.superuser.user.id }, 'Hello from the positive test'))
  })
  afterAll(() => ctx?.close())

  /** A new, unattached upload of the superuser (binding one uses it up). */
  async function freshUpload(tag: string): Promise<string> {
    const form = fileForm(fixtures.png, { filename: 'positive.png', contentType: 'image/png', tag })
    const response = await request(ctx.app, { method: 'POST', url: '/uploads', token: fixtures.superuser.accessToken, payload: form.payload, headers: form.headers })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().data.id
  }

  async function currentImages(serviceId: string): Promise<string[]> {
    const response = await request(ctx.app, { method: 'GET', url: `/services/${serviceId}`, token: fixtures.superuser.accessToken })
    return (response.json().data.images as { id: string }[]).map((image) => image.id)
  }

  /** Registers an account and answers the token of the e-mail it was sent. */
  async function mailedToken(send: (email: string) => Promise<void>): Promise<string> {
    const email = `${unique('positive')}@example.test`
    await send(email)
    await ctx.app.container.worker.drain()
    return ctx.mailer.tokenTo(email)
  }
  const activationToken = () =>
    mailedToken(async (email) => {
      await request(ctx.app, { method: 'POST', url: '/auth/register', payload: { email, password: 'Positive-Test-1', fullName: 'Positive Test' } })
    })
  const resetToken = () =>
    mailedToken(async (email) => {
      await createUser(ctx, { email })
      await request(ctx.app, { method: 'POST', url: '/auth/forgot-password', payload: { email } })
    })

  /**
   * Real values for fields that name something that must exist or that the API issued, by field
   * name (and, where a name means different things, by operation). A value drawn from the schema
   * is replaced by one of these; a function makes a new one for each request.
   */
  function references(operation: Operation): Record<string, () => unknown> {
    const name = operationName(operation)
    // In turn, so that a run is the same every time.
    let turn = 0
    const pick = <T,>(values: T[]) => values[turn++ % values.length]!
    const users = [fixtures.other.user.id, fixtures.superuser.user.id]
    const token = name.endsWith('/auth/activate') ? activationToken : resetToken
    return {
      serviceId: () => pick(fixtures.serviceIds),
      categoryId: () => fixtures.categoryIds[1],
      // Categories have two levels: a parent is a top-level category.
      parentId: () => fixtures.categoryIds[0],
      roleId: () => fixtures.roleIds[0],
      roleIds: () => fixtures.roleIds,
      userId: () => pick(users),
      sellerId: () => pick(users),
      buyerId: () => pick(users),
      actor: () => fixtures.superuser.user.id,
      target: () => fixtures.other.user.id,
      recipientId: () => fixtures.other.user.id,
      conversationId: () => conversationId,
      orderId: () => pick(fixtures.orderIds),
      reviewId: () => fixtures.reviewIds[0],
      packageId: () => undefined,
      bannerId: () => freshUpload('service_banner'),
      imageIds: async () => [await freshUpload('service_gallery')],
      // Reordering names every current image of the service, each once.
      ...(name.endsWith('/images/order') && { imageIds: () => currentImages(fixtures.serviceIds[0]!) }),
      avatar: () => freshUpload('avatar'),
      token,
      refreshToken: () => fixtures.other.refreshToken,
      refresh: () => fixtures.other.refreshToken,
    }
  }

  /** The value with its reference fields, at any depth, set to real ones. */
  async function withReferences(value: unknown, real: Record<string, () => unknown>): Promise<unknown> {
    if (Array.isArray(value)) return Promise.all(value.map((item) => withReferences(item, real)))
    if (value === null || typeof value !== 'object') return value
    const entries = await Promise.all(
      Object.entries(value).map(async ([key, child]) => {
        const make = real[key]
        if (!make) return [key, await withReferences(child, real)] as const
        const replacement = await make()
        return [key, replacement === undefined ? child : replacement] as const
      }),
    )
    return Object.fromEntries(entries)
  }

  const pathValue = (parameter: Parameter): string => {
    const values: Record<string, string[]> = {
      serviceId: fixtures.serviceIds,
      categoryId: [fixtures.categoryIds[1]!],
      roleId: fixtures.roleIds,
      userId: [fixtures.other.user.id],
      id: fixtures.portfolioIds,
      orderId: fixtures.orderIds,
      reviewId: fixtures.reviewIds,
      uploadId: fixtures.uploadIds,
      webhookId: fixtures.webhookIds,
      deliveryId: fixtures.deliveryIds,
      conversationId: [conversationId],
      path: fixtures.uploadPaths,
    }
    return values[parameter.name]?.[0] ?? '0190a000-0000-7000-8000-00000000abcd'
  }

  /** Query strings the document accepts: each parameter drawn from its schema, the optional ones half of the time. */
  function queryCandidates(operation: Operation): Json[] {
    const parameters = operation.queryParams.filter((parameter) => parameter.name !== 'cursor')
    const draw = fc.record(
      Object.fromEntries(parameters.map((parameter) => [parameter.name, arbitraryFromSchema(parameter.schema, () => [], parameter.name)])),
      { requiredKeys: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name) },
    )
    return fc.sample(draw, { numRuns: DRAWS, seed: SEED }).filter((query) => parameters.every((parameter) => !(parameter.name in query) || accepts(parameter.schema, query[parameter.name])))
  }

  function bodyCandidates(operation: Operation): unknown[] {
    if (operation.bodyKind !== 'json' || !operation.bodySchema) return []
    const schema = operation.bodySchema
    const examples = operation.bodyExamples.filter((example) => accepts(schema, example))
    const drawn = fc.sample(arbitraryFromSchema(schema, () => []), { numRuns: DRAWS, seed: SEED }).filter((body) => accepts(schema, body))
    const unique = [...new Map([...examples, ...drawn].map((body) => [JSON.stringify(body), body])).values()]
    return [...examples, ...unique.slice(examples.length, examples.length + RUNS)]
  }

  const headerCandidates = (operation: Operation): Record<string, string>[] =>
    fc
      .sample(fc.record(Object.fromEntries(operation.headerParams.map((parameter) => [parameter.name, arbitraryFromSchema(parameter.schema, () => [], parameter.name)]))), { numRuns: DRAWS, seed: SEED })
      .filter((headers) => operation.headerParams.every((parameter) => accepts(parameter.schema, headers[parameter.name])))
      .map((headers) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)])))

  async function requestsFor(operation: Operation): Promise<Sent[]> {
    const real = references(operation)
    const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const parameter = operation.pathParams.find((candidate) => candidate.name === name)!
      return name === 'path' ? pathValue(parameter) : encodeURIComponent(pathValue(parameter))
    })
    const queries = queryCandidates(operation)
    const headers = headerCandidates(operation)
    const bodies = bodyCandidates(operation)
    const count = Math.max(operation.bodyKind === 'json' ? bodies.length : 0, Math.min(RUNS, Math.max(queries.length, 1)))
    const sent: Sent[] = []
    for (let index = 0; index < count; index++) {
      const query = (await withReferences(queries[index % Math.max(queries.length, 1)] ?? {}, real)) as Json
      const search = new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)])).toString()
      const body = operation.bodyKind === 'json' ? await withReferences(bodies[index], real) : undefined
      sent.push({
        url: `${path}${search ? `?${search}` : ''}`,
        // A fresh key each time: a key already used for another body is 422, not what is tested here.
        headers: Object.fromEntries(Object.entries(headers[index % Math.max(headers.length, 1)] ?? {}).map(([name, value]) => [name, name === 'Idempotency-Key' ? `${value.slice(0, 200)}-${index}-${unique('k')}` : value])),
        ...(body !== undefined && { body }),
        note: index < operation.bodyExamples.length && operation.bodyKind === 'json' ? `example ${index + 1}` : 'drawn from the schema',
      })
    }
    return sent
  }

  const isBeyondSchema = (operation: Operation, details: { field: string; message: string }[]) =>
    details.length > 0 &&
    details.every((detail) => RULES_BEYOND_SCHEMA.some((rule) => rule.operation.test(operationName(operation)) && rule.field.test(detail.field) && rule.message.test(detail.message)))

  it('reads the operations from the document', () => {
    expect(operations.length).toBeGreaterThan(60)
  })

  it('accepts every request the document calls valid (no 400, no 5xx)', { timeout: 600_000 }, async () => {
    const failures: string[] = []
    let sentCount = 0
    for (const operation of operations) {
      const name = operationName(operation)
      if (ONLY && !name.includes(ONLY)) continue
      // Multipart forms are read field by field by their handlers; the document's examples of
      // them, with real files, are sent by openapi-examples.test.ts.
      if (operation.bodyKind === 'multipart') continue
      if (operation.bodyKind === 'json' && bodyCandidates(operation).length === 0) {
        failures.push(`${name}: no body the document accepts could be built from its schema or examples`)
        continue
      }
      for (const sent of await requestsFor(operation)) {
        // Logging out ends the session it is sent with: each gets its own.
        const token = name.endsWith('/auth/logout') ? (await createUser(ctx, { isStaff: true, isSuperuser: true })).accessToken : fixtures.superuser.accessToken
        const response = await ctx.app.inject({
          method: operation.method,
          url: sent.url,
          headers: { ...sent.headers, authorization: `Bearer ${token}` },
          ...(sent.body !== undefined && { payload: sent.body as object }),
        })
        sentCount++
        const refused = response.statusCode === 400 && !isBeyondSchema(operation, response.json().error?.details ?? [])
        if (refused || response.statusCode >= 500) {
          failures.push(`${name} (${sent.note}) answered ${response.statusCode}: ${response.body.slice(0, 600)}\n  ${operation.method} ${sent.url}${sent.body === undefined ? '' : `\n  body: ${JSON.stringify(sent.body).slice(0, 800)}`}`)
        }
      }
    }
    console.info(`positive data: ${sentCount} requests sent`)
    expect(failures, `${failures.length} request(s) the document calls valid were refused:\n\n${failures.join('\n\n')}`).toEqual([])
  })
})
