/**
 * Both shapes of answers. A Variant B client sends `Prefer: envelope=none` on every request and
 * goes from registration to a paid-out sale; each answer must be the bare payload (a page as
 * `{ results, count, page, pages, hasNext, hasPrev }`, an error as `{ error }`), carry
 * `Preference-Applied` and `Vary: Prefer`, and match the documented answer of its operation in
 * the bare shape. Without the header nothing changes; a deployment may make bare the default.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bareSchema } from '../../src/http/envelope.ts'
import { multipart, pdf } from '../factories/files.ts'
import { documentsForm, PERSONAL_DETAILS } from '../factories/kyc.ts'
import { createCategory } from '../factories/services.ts'
import { createUser, unique, type TestUser } from '../factories/users.ts'
import { API, createTestApp, type TestContext } from '../setup/test-app.ts'

type Json = Record<string, unknown>
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
for (const format of ['int32', 'int64', 'binary']) ajv.addFormat(format, true)

/** The document's schemas with their `#/components/schemas/...` references written out. */
function inline(schema: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inline(item, components))
  if (schema === null || typeof schema !== 'object') return schema
  const ref = (schema as Json).$ref
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return inline(components[ref.slice('#/components/schemas/'.length)], components)
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inline(value, components)]))
}

describe('Variant B answers on request (Prefer: envelope=none)', () => {
  let ctx: TestContext
  let document: Json
  const validators = new Map<string, ValidateFunction>()

  beforeAll(async () => {
    ctx = await createTestApp()
    document = (await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json()
  })
  afterAll(() => ctx?.close())

  /** The documented answer of an operation and status, in the bare shape. */
  function documented(method: Method, path: string, status: number): ValidateFunction {
    const key = `${method} ${path} ${status}`
    let validate = validators.get(key)
    if (!validate) {
      const operation = (document.paths as Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>>)[`${API}${path}`]![method.toLowerCase()]!
      const schema = operation.responses[String(status)]!.content['application/json']!.schema
      validate = ajv.compile(bareSchema(inline(schema, (document.components as { schemas: Record<string, unknown> }).schemas)) as object)
      validators.set(key, validate)
    }
    return validate
  }

  /**
   * Sends a request as a Variant B client and checks its answer: the status, the bare shape its
   * operation documents (`path` is the documented path, `url` the one sent), and the headers.
   */
  async function send(method: Method, path: string, options: { url?: string; token?: string; payload?: unknown; form?: { payload: Buffer; headers: Record<string, string> }; status: number }): Promise<LightMyRequestResponse & { body: string }> {
    const response = await ctx.app.inject({
      method,
      url: `${API}${options.url ?? path}`,
      headers: { prefer: 'envelope=none', ...options.form?.headers, ...(options.token && { authorization: `Bearer ${options.token}` }) },
      ...(options.form ? { payload: options.form.payload } : options.payload !== undefined && { payload: options.payload as Json }),
    })
    expect(response.statusCode, `${method} ${path}: ${response.body}`).toBe(options.status)
    expect(response.headers['preference-applied'], `${method} ${path}`).toBe('envelope=none')
    expect(String(response.headers.vary)).toContain('Prefer')
    const body = response.json()
    expect(body, `${method} ${path} answered in the envelope`).not.toHaveProperty('success')
    const validate = documented(method, path, options.status)
    expect(validate(body) ? [] : validate.errors, `${method} ${path}: not the documented bare answer`).toEqual([])
    return response
  }
  const data = (response: LightMyRequestResponse) => response.json<Json>()

  it('takes a client from registration to a paid-out sale with bare answers, pages and errors', async () => {
    const staff = await createUser(ctx, { permissions: ['approve_services', 'manage_kyc', 'view_kyc', 'approve_withdrawals'] })
    const categoryId = await createCategory(ctx)

    // Register (Variant B spells the name `name`), activate from the e-mail, log in, refresh with `refresh`.
    const email = `${unique('variant-b')}@example.test`
    const password = 'Variant-B-Seller-1'
    const registered = data(await send('POST', '/auth/register', { payload: { email, password, name: 'Bea Bare' }, status: 201 }))
    expect(registered).toMatchObject({ email, fullName: 'Bea Bare', isActive: false })
    await ctx.app.container.worker.drain()
    expect(data(await send('POST', '/auth/activate', { payload: { token: ctx.mailer.tokenTo(email) }, status: 200 }))).toMatchObject({ id: registered.id, isActive: true })
    const login = data(await send('POST', '/auth/login', { payload: { email, password }, status: 200 }))
    expect(Object.keys(login).sort()).toEqual(['accessToken', 'refreshToken', 'user'])
    const refreshed = data(await send('POST', '/auth/refresh', { payload: { refresh: login.refreshToken }, status: 200 }))
    expect(Object.keys(refreshed).sort()).toEqual(['accessToken', 'refreshToken'])
    expect(refreshed.refreshToken).not.toBe(login.refreshToken)
    const seller = String(refreshed.accessToken)

    // A service, approved by staff, then shown in the catalogue's pages and its JSON-text read.
    const service = data(
      await send('POST', '/services', {
        token: seller,
        payload: { title: 'I will design a bare logo', description: 'A logo with no envelope around it, source files included.', categoryId, packages: [{ name: 'Basic', price: 45.5, deliveryDays: 3, revisions: 1 }] },
        status: 201,
      }),
    )
    expect(data(await send('POST', '/admin/services/{serviceId}/approve', { url: `/admin/services/${String(service.id)}/approve`, token: staff.accessToken, status: 200 }))).toMatchObject({ status: 'active' })
    const page = data(await send('GET', '/services', { url: `/services?sellerId=${String(registered.id)}&limit=1`, status: 200 }))
    expect(page).toMatchObject({ count: 1, page: 1, pages: 1, hasNext: false, hasPrev: false })
    expect(Object.keys(page).slice(0, 6)).toEqual(['results', 'count', 'page', 'pages', 'hasNext', 'hasPrev'])
    expect((page.results as Json[]).map((item) => item.id)).toEqual([service.id])
    const read = data(await send('GET', '/services/{serviceId}', { url: `/services/${String(service.id)}`, status: 200 }))
    expect(read).toMatchObject({ id: service.id, title: 'I will design a bare logo', status: 'active' })
    expect(Array.isArray(data(await send('GET', '/categories', { status: 200 })))).toBe(true)

    // A buyer deposits and orders; the seller accepts and delivers; the buyer completes and reviews.
    const buyer: TestUser = await createUser(ctx)
    expect(data(await send('POST', '/wallet/deposits', { token: buyer.accessToken, payload: { amount: 100 }, status: 201 }))).toMatchObject({ amount: 100 })
    const packageId = (read.packages as Json[])[0]!.id
    const order = data(await send('POST', '/orders', { token: buyer.accessToken, payload: { serviceId: service.id, packageId, requirements: 'A bare logo, please.' }, status: 201 }))
    expect(order).toMatchObject({ status: 'pending', total: 45.5 })
    const orderUrl = `/orders/${String(order.id)}`
    await send('PUT', '/orders/{orderId}/status', { url: `${orderUrl}/status`, token: seller, payload: { status: 'in_progress' }, status: 200 })
    const delivered = data(
      await send('POST', '/orders/{orderId}/deliver', {
        url: `${orderUrl}/deliver`,
        token: seller,
        form: multipart([{ name: 'message', value: 'The logo, bare.' }, { name: 'files', filename: 'logo.pdf', content: pdf(), contentType: 'application/pdf' }]),
        status: 200,
      }),
    )
    expect(delivered).toMatchObject({ status: 'delivered' })
    expect(data(await send('PUT', '/orders/{orderId}/status', { url: `${orderUrl}/status`, token: buyer.accessToken, payload: { status: 'completed' }, status: 200 }))).toMatchObject({ status: 'completed' })
    expect(data(await send('POST', '/reviews', { token: buyer.accessToken, payload: { orderId: order.id, rating: 5, comment: 'Exactly as bare as promised.' }, status: 201 }))).toMatchObject({ rating: 5 })
    const conversations = data(await send('GET', '/messages/conversations', { token: buyer.accessToken, status: 200 }))
    expect(conversations.count).toBe(1)
    const conversationId = String((conversations.results as Json[])[0]!.id)
    const messages = data(await send('GET', '/messages/conversations/{conversationId}', { url: `/messages/conversations/${conversationId}`, token: buyer.accessToken, status: 200 }))
    expect(messages).toMatchObject({ page: 1, hasPrev: false })
    expect(messages).toHaveProperty('nextCursor')

    // The seller passes KYC and asks for a payout of the earnings; staff pay it.
    await send('POST', '/seller/kyc/step1', { token: seller, payload: PERSONAL_DETAILS, status: 200 })
    const submitted = data(await send('POST', '/seller/kyc/step2', { token: seller, form: await documentsForm('passport', 'all'), status: 200 }))
    await send('POST', '/admin/kyc/{submissionId}/approve', { url: `/admin/kyc/${String(submitted.submissionId)}/approve`, token: staff.accessToken, status: 200 })
    const wallet = data(await send('GET', '/wallet', { token: seller, status: 200 }))
    expect(wallet.balance).toBe(40.95)
    const statement = data(await send('GET', '/wallet/transactions', { token: seller, status: 200 }))
    expect(statement).toMatchObject({ count: 1, results: [expect.objectContaining({ type: 'order_earning', amount: 40.95 })] })
    const payout = data(await send('POST', '/wallet/payout', { token: seller, payload: { amount: 40.95, method: 'paypal', details: { email } }, status: 201 }))
    expect(payout).toMatchObject({ status: 'pending', amount: 40.95 })
    expect(data(await send('POST', '/admin/payouts/{payoutId}/approve', { url: `/admin/payouts/${String(payout.id)}/approve`, token: staff.accessToken, status: 200 }))).toMatchObject({ status: 'processed' })

    // Errors keep their status and lose the envelope: validation, not found, wrong method.
    const invalid = data(await send('POST', '/wallet/payout', { token: seller, payload: { amount: 25.001, method: 'paypal', details: { email } }, status: 400 }))
    expect(invalid).toEqual({ error: { code: 'VALIDATION_ERROR', message: 'The request is invalid', details: [{ field: 'amount', message: 'must be a number from 10.00 to 1000000.00 with at most two decimals' }] } })
    expect(data(await send('GET', '/orders/{orderId}', { url: '/orders/0190a000-0000-7000-8000-00000000abcd', token: buyer.accessToken, status: 404 }))).toEqual({
      error: { code: 'NOT_FOUND', message: expect.any(String), details: [] },
    })
    const wrongMethod = await ctx.app.inject({ method: 'DELETE', url: `${API}/wallet`, headers: { prefer: 'envelope=none', authorization: `Bearer ${seller}` } })
    expect(wrongMethod.statusCode).toBe(405)
    expect(wrongMethod.headers['preference-applied']).toBe('envelope=none')
    expect(wrongMethod.json()).toEqual({ error: { code: 'METHOD_NOT_ALLOWED', message: expect.any(String), details: [] } })
    const undecodable = await ctx.app.inject({ method: 'GET', url: `${API}/services/%E0%A4%A`, headers: { prefer: 'envelope=none' } })
    expect(undecodable.statusCode).toBe(404)
    expect(undecodable.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No such route', details: [] } })
  })

  it('answers a rate limit bare too (429 with Retry-After)', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_GENERAL: '1' } })
    try {
      const ask = () => limited.app.inject({ method: 'GET', url: `${API}/categories`, headers: { prefer: 'envelope=none' } })
      expect((await ask()).statusCode).toBe(200)
      const refused = await ask()
      expect(refused.statusCode).toBe(429)
      expect(refused.headers['retry-after']).toBeDefined()
      expect(refused.headers['preference-applied']).toBe('envelope=none')
      expect(refused.json()).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String), details: [] } })
    } finally {
      await limited.close()
    }
  })

  it('replays an idempotent answer in the shape the retry asks for, and stores it once', async () => {
    const buyer = await createUser(ctx)
    const key = unique('variant-b-key')
    const deposit = (prefer?: string) => ctx.app.inject({ method: 'POST', url: `${API}/wallet/deposits`, headers: { authorization: `Bearer ${buyer.accessToken}`, 'idempotency-key': key, ...(prefer && { prefer }) }, payload: { amount: 12.5 } })
    const bare = await deposit('envelope=none')
    expect(bare.statusCode).toBe(201)
    expect(bare.json()).toMatchObject({ amount: 12.5 })
    const wrapped = await deposit()
    expect(wrapped.headers['idempotent-replayed']).toBe('true')
    expect(wrapped.json()).toEqual({ success: true, data: bare.json() })
    const bareAgain = await deposit('envelope=none')
    expect(bareAgain.headers['idempotent-replayed']).toBe('true')
    expect(bareAgain.body).toBe(bare.body)
  })

  it('leaves every answer wrapped without the header (no Preference-Applied; Vary: Prefer for caches)', async () => {
    const user = await createUser(ctx)
    for (const [url, status] of [['/users/me', 200], ['/wallet/transactions', 200], ['/orders/0190a000-0000-7000-8000-00000000abcd', 404]] as const) {
      const response = await ctx.app.inject({ method: 'GET', url: `${API}${url}`, headers: { authorization: `Bearer ${user.accessToken}` } })
      expect(response.statusCode).toBe(status)
      expect(response.json()).toHaveProperty('success', status === 200)
      expect(response.headers).not.toHaveProperty('preference-applied')
      expect(String(response.headers.vary)).toContain('Prefer')
    }
    const page = await ctx.app.inject({ method: 'GET', url: `${API}/wallet/transactions`, headers: { authorization: `Bearer ${user.accessToken}`, prefer: 'respond-async' } })
    expect(Object.keys(page.json().data)).toEqual(['items', 'pagination'])
    expect(page.headers).not.toHaveProperty('preference-applied')
  })

  it('sends files and the OpenAPI document as they are, whatever the preference', async () => {
    const openapi = await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json`, headers: { prefer: 'envelope=none' } })
    expect(openapi.json()).toHaveProperty('openapi', '3.1.0')
    expect(openapi.headers).not.toHaveProperty('preference-applied')
  })
})

describe('a deployment whose default is bare (RESPONSE_ENVELOPE=none)', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestApp({ env: { RESPONSE_ENVELOPE: 'none' } })
  })
  afterAll(() => ctx?.close())

  it('answers bare by default and wrapped on Prefer: envelope=wrapped', async () => {
    const user = await createUser(ctx)
    const headers = { authorization: `Bearer ${user.accessToken}` }
    const bare = await ctx.app.inject({ method: 'GET', url: `${API}/wallet/transactions`, headers })
    expect(bare.json()).toMatchObject({ results: [], count: 0, page: 1, pages: 0, hasNext: false, hasPrev: false })
    expect(bare.headers).not.toHaveProperty('preference-applied')
    const missing = await ctx.app.inject({ method: 'GET', url: `${API}/nothing-here` })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No such route', details: [] } })
    const wrapped = await ctx.app.inject({ method: 'GET', url: `${API}/wallet/transactions`, headers: { ...headers, prefer: 'envelope=wrapped' } })
    expect(wrapped.json()).toEqual({ success: true, data: { items: [], pagination: { page: 1, limit: 20, total: 0, pages: 0, hasNext: false, hasPrev: false } } })
    expect(wrapped.headers['preference-applied']).toBe('envelope=wrapped')
  })

  it('documents the bare answers it sends, and says how to ask for the envelope', async () => {
    const document = (await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json()
    const transactions = document.paths[`${API}/wallet/transactions`].get.responses['200'].content['application/json'].schema
    expect(Object.keys(transactions.properties).slice(0, 6)).toEqual(['results', 'count', 'page', 'pages', 'hasNext', 'hasPrev'])
    expect(document.components.schemas.ErrorBody.properties).not.toHaveProperty('success')
    expect(document.paths[`${API}/services`].post.responses['201'].links.GetServicesByServiceId.parameters).toEqual({ serviceId: '$response.body#/id' })
    expect(document.info.description).toContain('Prefer: envelope=wrapped')
  })
})
