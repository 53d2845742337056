/**
 * Every request body example of the OpenAPI document works: for each operation that takes a JSON
 * body (read from the document, so a new route is checked without being listed here), the
 * document shows at least one example, valid by the body's schema, and each example, sent as it
 * is by a caller entitled to make the request, is answered 2xx. Only ids (of rows the test
 * creates) and one-time tokens are replaced by real ones. Multipart forms are built from their
 * schema as a generated client would: each text field with its example, each file field (binary)
 * a small real file.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Permission } from '../../src/access/access.ts'
import { openApiDocument } from '../../scripts/openapi-document.ts'
import { fileForm, multipart, pdf, png, type FormPart, type MultipartRequest } from '../factories/files.ts'
import { kycStep1, passKyc, submitKyc } from '../factories/kyc.ts'
import { sendMessage } from '../factories/messages.ts'
import { makeOffer, offerParties } from '../factories/offers.ts'
import { createActiveService, createFundedBuyer, orderIn } from '../factories/orders.ts'
import { openRequest } from '../factories/requests.ts'
import { createCategory, publishService } from '../factories/services.ts'
import { createSuperuser, createUser, unique, type TestUser } from '../factories/users.ts'
import { createTestApp, request, type TestContext } from '../setup/test-app.ts'

type Json = Record<string, unknown>
type Schema = Json & { properties?: Record<string, Json> }

interface MediaType {
  schema: Schema
  example?: unknown
  examples?: Record<string, { value: unknown }>
}

interface BodyOperation {
  name: string
  method: string
  path: string
  kind: 'json' | 'multipart'
  media: MediaType
}

const isFileField = (schema: Json): boolean => schema.format === 'binary' || (schema.items as Json | undefined)?.format === 'binary'
const fileFieldsOf = (schema: Schema): string[] => Object.keys(schema.properties ?? {}).filter((name) => isFileField(schema.properties![name]!))

/**
 * The examples of a body as the document shows them: @fastify/swagger moves a body schema's
 * `examples` to its media type (`example` for one, named `examples` for several). A form shows
 * one example per text field (files have none): the form built from them is its example.
 */
function examplesOf(media: MediaType, kind: BodyOperation['kind']): Json[] {
  if (kind === 'multipart') {
    const texts = Object.entries(media.schema.properties ?? {}).filter(([, schema]) => !isFileField(schema) && Array.isArray(schema.examples))
    return texts.length > 0 ? [Object.fromEntries(texts.map(([name, schema]) => [name, (schema.examples as unknown[])[0]]))] : []
  }
  return (media.examples ? Object.values(media.examples).map((example) => example.value) : media.example !== undefined ? [media.example] : ((media.schema.examples as unknown[] | undefined) ?? [])) as Json[]
}

function bodyOperations(document: Json): BodyOperation[] {
  const found: BodyOperation[] = []
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, { requestBody?: { content: Record<string, MediaType> } }>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const content = operation.requestBody?.content ?? {}
      const name = `${method.toUpperCase()} ${path}`
      if (content['application/json']) found.push({ name, method: method.toUpperCase(), path, kind: 'json', media: content['application/json'] })
      else if (content['multipart/form-data']) found.push({ name, method: method.toUpperCase(), path, kind: 'multipart', media: content['multipart/form-data'] })
    }
  }
  return found
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i
const uuidsIn = (value: unknown): string[] => JSON.stringify(value).match(UUID) ?? []

/** The example with these fields, at any depth, set to real values; every field given must be in the example. */
function withRealValues(example: Json, real: Json): Json {
  const unused = new Set(Object.keys(real))
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk)
    if (value === null || typeof value !== 'object') return value
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) => {
        if (!(key in real)) return [key, walk(child)]
        unused.delete(key)
        return [key, real[key]]
      }),
    )
  }
  const body = walk(example) as Json
  expect([...unused], 'real values given for fields the example does not have').toEqual([])
  return body
}

const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
// Formats the document states for readers; the validator's own schemas do not use them.
for (const format of ['int32', 'int64', 'binary']) ajv.addFormat(format, true)

/** What sending one example needs. */
interface Setup {
  /** The caller's access token; none for public routes. */
  token?: string
  params?: Record<string, string>
  /** Real values for the example's ids (and one-time tokens), by field name. */
  real?: Json
  /** Multipart: the file parts sent beside the example's fields (default: a PNG in every other field of the form). */
  files?: FormPart[]
}
type Scenario = (example: Json) => Promise<Setup>

const document = await openApiDocument()
const operations = bodyOperations(document)

describe('the request body examples of the OpenAPI document', () => {
  let ctx: TestContext
  let superuser: TestUser
  let image: Buffer

  beforeAll(async () => {
    // Earnings clear for a while, so that a completed order can be refunded by staff.
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '7' } })
    superuser = await createSuperuser(ctx)
    image = await png({ width: 32, height: 24 })
  })
  afterAll(() => ctx?.close())

  const pngPart = (name: string, filename = `${name}.png`): FormPart => ({ name, filename, content: image, contentType: 'image/png' })
  const pdfPart = (name: string, filename: string): FormPart => ({ name, filename, content: pdf(), contentType: 'application/pdf' })

  /** POSTs a JSON body or a form through the API and answers the created row (any 2xx). */
  async function created(token: string | undefined, url: string, body: object | MultipartRequest): Promise<Json & { id: string }> {
    const options = 'payload' in body && Buffer.isBuffer(body.payload) ? body : { payload: body }
    const response = await request(ctx.app, { method: 'POST', url, token, ...options })
    expect(response.statusCode, `${url}: ${response.body}`).toBeLessThan(300)
    return response.json().data
  }

  const user = () => createUser(ctx)
  const staff = (...permissions: Permission[]) => createUser(ctx, { permissions })
  const role = async () => (await created(superuser.accessToken, '/admin/roles', { name: unique('Role '), permissions: ['view_users'] })).id
  const upload = async (owner: TestUser, tag: string) => (await created(owner.accessToken, '/uploads', fileForm(image, { filename: 'logo.png', contentType: 'image/png', tag }))).id
  const times = <T>(count: number, make: () => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: count }, make))
  const countOf = (value: unknown) => (Array.isArray(value) ? value.length : 0)

  /** Delivers the queued e-mails and answers the token in the newest one to `email`. */
  async function mailedToken(email: string): Promise<string> {
    await ctx.app.container.worker.drain()
    return ctx.mailer.tokenTo(email)
  }

  /** A password reset token, as the e-mail of `POST /auth/forgot-password` carries it. */
  async function resetToken(): Promise<Setup> {
    const { user: account } = await user()
    await created(undefined, '/auth/forgot-password', { email: account.email })
    return { real: { token: await mailedToken(account.email) } }
  }

  /** The owner's real uploads and category for the ids a service body names. */
  async function serviceIds(owner: TestUser, example: Json): Promise<Json> {
    return {
      categoryId: await createCategory(ctx),
      ...('bannerId' in example && { bannerId: await upload(owner, 'service_banner') }),
      ...('imageIds' in example && { imageIds: await times(countOf(example.imageIds), () => upload(owner, 'service_gallery')) }),
    }
  }

  async function ownService(): Promise<{ owner: TestUser; serviceId: string }> {
    const owner = await user()
    return { owner, serviceId: await publishService(ctx, owner.accessToken, await createCategory(ctx)) }
  }

  /** A seller with KYC passed and `balance` in the wallet: allowed to ask for a payout. */
  async function verifiedSeller(balance: number): Promise<TestUser> {
    const seller = await createFundedBuyer(ctx, balance)
    await passKyc(ctx.app, seller.accessToken, superuser.accessToken)
    return seller
  }

  /** A record of the portfolio collection, made from the document's own example of its creation. */
  function portfolioRecord(collection: string): Scenario {
    return async () => {
      const owner = await user()
      const [example] = examplesOf(operations.find((operation) => operation.name === `POST /api/v1/users/me/${collection}`)!.media, 'json')
      return { token: owner.accessToken, params: { id: (await created(owner.accessToken, `/users/me/${collection}`, example!)).id } }
    }
  }

  /** Operations whose caller or state is not a newly registered, logged-in user. */
  const scenarios: Record<string, Scenario> = {
    'POST /api/v1/auth/register': async () => ({}),
    'POST /api/v1/auth/activation/resend': async () => ({}),
    'POST /api/v1/auth/forgot-password': async () => ({}),
    'POST /api/v1/auth/password-reset/ask': async () => ({}),
    'POST /api/v1/auth/activate': async () => {
      const email = `${unique('activate')}@example.test`
      await created(undefined, '/auth/register', { email, password: 'Brand-Studio-42', fullName: 'Lucía Navarro' })
      return { real: { token: await mailedToken(email) } }
    },
    'POST /api/v1/auth/login': async (example) => {
      await createUser(ctx, { email: example.email as string, password: example.password as string })
      return {}
    },
    // The token under the name the example uses (`refreshToken`, or `refresh` of the other variant).
    'POST /api/v1/auth/refresh': async (example) => ({ real: { [Object.keys(example)[0]!]: (await user()).refreshToken } }),
    'POST /api/v1/auth/logout': async () => {
      const caller = await user()
      return { token: caller.accessToken, real: { refreshToken: caller.refreshToken } }
    },
    'POST /api/v1/auth/reset-password': resetToken,
    'POST /api/v1/auth/password-reset': resetToken,

    ...Object.fromEntries(
      ['skills', 'projects', 'experiences', 'education'].flatMap((collection) => [
        [`PUT /api/v1/users/me/${collection}/{id}`, portfolioRecord(collection)],
        [`PATCH /api/v1/users/me/${collection}/{id}`, portfolioRecord(collection)],
      ]),
    ),

    'POST /api/v1/admin/roles': async () => ({ token: superuser.accessToken }),
    'PUT /api/v1/admin/roles/{roleId}': async () => ({ token: superuser.accessToken, params: { roleId: await role() } }),
    'POST /api/v1/admin/staff': async () => ({ token: superuser.accessToken, real: { roleId: await role() } }),
    'PUT /api/v1/admin/staff/{userId}/roles': async (example) => {
      const member = await createUser(ctx, { isStaff: true })
      return { token: superuser.accessToken, params: { userId: member.user.id }, real: { roleIds: await times(countOf(example.roleIds), role) } }
    },
    'POST /api/v1/admin/users/{userId}/suspend': async () => ({ token: (await staff('manage_users')).accessToken, params: { userId: (await user()).user.id } }),

    'POST /api/v1/categories': async () => ({ token: superuser.accessToken, real: { parentId: await createCategory(ctx) } }),
    'PUT /api/v1/categories/{categoryId}': async () => ({ token: superuser.accessToken, params: { categoryId: await createCategory(ctx) } }),

    'POST /api/v1/services': async (example) => {
      const owner = await user()
      return { token: owner.accessToken, real: await serviceIds(owner, example) }
    },
    'PUT /api/v1/services/{serviceId}': async (example) => {
      const { owner, serviceId } = await ownService()
      return { token: owner.accessToken, params: { serviceId }, real: await serviceIds(owner, example) }
    },
    'POST /api/v1/services/{serviceId}/images': async () => {
      const { owner, serviceId } = await ownService()
      return { token: owner.accessToken, params: { serviceId }, files: [pngPart('files', 'shop-sign.png')] }
    },
    'POST /api/v1/services/{serviceId}/banner': async () => {
      const { owner, serviceId } = await ownService()
      return { token: owner.accessToken, params: { serviceId } }
    },
    'PUT /api/v1/services/{serviceId}/images/order': async (example) => {
      const { owner, serviceId } = await ownService()
      const parts = Array.from({ length: countOf(example.imageIds) }, (_, index) => pngPart('files', `concept-${index + 1}.png`))
      const service = await created(owner.accessToken, `/services/${serviceId}/images`, multipart(parts))
      const imageIds = (service.images as { id: string }[]).map((row) => row.id).reverse()
      return { token: owner.accessToken, params: { serviceId }, real: { imageIds } }
    },
    'POST /api/v1/admin/services/{serviceId}/reject': async () => ({ token: (await staff('approve_services')).accessToken, params: { serviceId: (await ownService()).serviceId } }),

    'POST /api/v1/orders': async (example) => {
      const [buyer, service] = await Promise.all([createFundedBuyer(ctx), createActiveService(ctx)])
      const extras = [service.extraIds.source, service.extraIds.express].slice(0, countOf(example.extras))
      return { token: buyer.accessToken, real: { serviceId: service.serviceId, packageId: service.packageIds.basic, ...(extras.length > 0 && { extras }) } }
    },
    // Each move from the state it starts from, by the party who makes it.
    'PUT /api/v1/orders/{orderId}/status': async (example) => {
      if (example.status === 'in_progress') {
        const order = await orderIn(ctx, 'pending')
        return { token: order.seller.accessToken, params: { orderId: order.orderId } }
      }
      if (example.status === 'disputed') {
        const order = await orderIn(ctx, 'in_progress')
        return { token: order.buyer.accessToken, params: { orderId: order.orderId } }
      }
      throw new Error(`no state prepared for an example that moves an order to ${String(example.status)}`)
    },
    'POST /api/v1/orders/{orderId}/deliver': async () => {
      const order = await orderIn(ctx, 'in_progress')
      return { token: order.seller.accessToken, params: { orderId: order.orderId }, files: [pdfPart('files', 'tostadero-azul-logo.pdf'), pngPart('files', 'tostadero-azul-logo.png')] }
    },
    'POST /api/v1/admin/orders/{orderId}/resolve': async () => ({ token: (await staff('resolve_disputes')).accessToken, params: { orderId: (await orderIn(ctx, 'disputed')).orderId } }),
    'POST /api/v1/admin/orders/{orderId}/refund': async () => ({ token: (await staff('manage_orders')).accessToken, params: { orderId: (await orderIn(ctx, 'completed')).orderId } }),
    'POST /api/v1/admin/orders/{orderId}/cancel': async () => ({ token: (await staff('manage_orders')).accessToken, params: { orderId: (await orderIn(ctx, 'pending')).orderId } }),
    // The seller asks for time or offers a refund; the buyer asks to cancel.
    'POST /api/v1/orders/{orderId}/requests': async (example) => {
      const order = await orderIn(ctx, 'in_progress')
      return { token: (example.type === 'cancellation' ? order.buyer : order.seller).accessToken, params: { orderId: order.orderId } }
    },
    ...Object.fromEntries(
      (['accept', 'decline', 'withdraw'] as const).map((move) => [
        `POST /api/v1/orders/{orderId}/requests/{requestId}/${move}`,
        async () => {
          const order = await orderIn(ctx, 'in_progress')
          const asked = await openRequest(ctx, order.buyer.accessToken, order.orderId, { type: 'cancellation' })
          return { token: (move === 'withdraw' ? order.buyer : order.seller).accessToken, params: { orderId: order.orderId, requestId: asked.id } }
        },
      ]),
    ),
    'POST /api/v1/orders/{orderId}/tip': async () => {
      const order = await orderIn(ctx, 'completed')
      return { token: order.buyer.accessToken, params: { orderId: order.orderId } }
    },
    'POST /api/v1/messages/conversations/{conversationId}/offers': async (example) => {
      const parties = await offerParties(ctx)
      const real = 'serviceId' in example ? { serviceId: (await createActiveService(ctx, parties.seller)).serviceId } : {}
      return { token: parties.seller.accessToken, params: { conversationId: parties.conversationId }, real }
    },
    ...Object.fromEntries(
      (['accept', 'decline', 'withdraw'] as const).map((move) => [
        `POST /api/v1/offers/{offerId}/${move}`,
        async () => {
          const parties = await offerParties(ctx)
          const offer = await makeOffer(ctx, parties)
          return { token: (move === 'withdraw' ? parties.seller : parties.buyer).accessToken, params: { offerId: offer.id } }
        },
      ]),
    ),
    // The example with criteria is the buyer's review; the one without, the seller's review of the buyer.
    'POST /api/v1/reviews': async (example) => {
      const order = await orderIn(ctx, 'completed')
      return { token: ('criteria' in example ? order.buyer : order.seller).accessToken, real: { orderId: order.orderId } }
    },
    'POST /api/v1/reviews/{reviewId}/reply': async () => {
      const order = await orderIn(ctx, 'completed')
      const review = await created(order.buyer.accessToken, '/reviews', { orderId: order.orderId, rating: 5 })
      // The seller's review makes the buyer's public, which the seller may then answer.
      await created(order.seller.accessToken, '/reviews', { orderId: order.orderId, rating: 5 })
      return { token: order.seller.accessToken, params: { reviewId: review.id } }
    },

    'POST /api/v1/notifications/read': async (example) => {
      const caller = await user()
      for (let n = 0; n < countOf(example.ids); n++) {
        await ctx.database.db.transaction((tx) => ctx.app.container.notifications.notify(tx, { userId: caller.user.id, kind: 'kyc.approved', link: { type: 'kyc_submission', id: caller.user.id }, data: {} }))
      }
      if (!('ids' in example)) return { token: caller.accessToken }
      const listed = await request(ctx.app, { method: 'GET', url: '/notifications', token: caller.accessToken })
      return { token: caller.accessToken, real: { ids: (listed.json().data.items as { id: string }[]).map((item) => item.id) } }
    },

    'POST /api/v1/wallet/payout': async (example) => ({ token: (await verifiedSeller(Number(example.amount) + 50)).accessToken }),
    'POST /api/v1/admin/payouts/{payoutId}/reject': async () => {
      const seller = await verifiedSeller(100)
      const payout = await created(seller.accessToken, '/wallet/payout', { amount: 60, method: 'paypal', details: { email: seller.user.email } })
      return { token: (await staff('approve_withdrawals')).accessToken, params: { payoutId: payout.id } }
    },
    'POST /api/v1/admin/wallets/{userId}/adjustments': async () => ({ token: superuser.accessToken, params: { userId: (await user()).user.id } }),

    'POST /api/v1/seller/kyc/step2': async () => {
      const seller = await user()
      expect((await kycStep1(ctx.app, seller.accessToken)).statusCode).toBe(200)
      return { token: seller.accessToken, files: [pngPart('documentFront', 'passport.png'), pngPart('selfie', 'selfie.png')] }
    },
    'POST /api/v1/admin/kyc/{submissionId}/reject': async () => {
      const seller = await user()
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      return { token: (await staff('manage_kyc')).accessToken, params: { submissionId } }
    },

    'POST /api/v1/messages': async (example) => {
      const [caller, other] = await Promise.all([user(), user()])
      if ('recipientId' in example) return { token: caller.accessToken, real: { recipientId: other.user.id } }
      const { conversationId } = await sendMessage(ctx, other, { recipientId: caller.user.id }, 'I have sent you the questionnaire.')
      return { token: caller.accessToken, real: { conversationId } }
    },
    'POST /api/v1/messages/conversations/{conversationId}/read': async () => {
      const [caller, other] = await Promise.all([user(), user()])
      const { conversationId } = await sendMessage(ctx, other, { recipientId: caller.user.id }, 'Did you see the new sketches?')
      return { token: caller.accessToken, params: { conversationId } }
    },
    'POST /api/v1/messages/files': async () => {
      const [caller, other] = await Promise.all([user(), user()])
      const { conversationId } = await sendMessage(ctx, other, { recipientId: caller.user.id }, 'Could you fill in the brand questionnaire?')
      return { token: caller.accessToken, real: { conversationId }, files: [pdfPart('file', 'brand-questionnaire.pdf')] }
    },

    'POST /api/v1/admin/webhooks': async () => ({ token: superuser.accessToken }),
    'PATCH /api/v1/admin/webhooks/{webhookId}': async () => {
      const endpoint = await created(superuser.accessToken, '/admin/webhooks', { url: 'https://hooks.example.com/marketplace/all' })
      return { token: superuser.accessToken, params: { webhookId: endpoint.id } }
    },
  }

  /** Anything else: a newly registered, logged-in user. */
  const asNewUser: Scenario = async () => ({ token: (await user()).accessToken })

  async function send(operation: BodyOperation, example: Json, setup: Setup): Promise<LightMyRequestResponse> {
    const url = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = setup.params?.[name]
      if (value === undefined) throw new Error(`${operation.name}: no value for the path parameter ${name}; give it a scenario`)
      return encodeURIComponent(value)
    })
    const body = withRealValues(example, setup.real ?? {})
    const exampleIds = uuidsIn(example)
    expect(
      uuidsIn(body).filter((id) => exampleIds.includes(id)),
      'ids of the example left unreplaced by real ones',
    ).toEqual([])
    const authorization = setup.token ? { authorization: `Bearer ${setup.token}` } : {}
    if (operation.kind === 'json') return ctx.app.inject({ method: operation.method as 'POST', url, headers: authorization, payload: body })
    const form = multipart([...Object.entries(body).map(([name, value]) => ({ name, value: String(value) })), ...(setup.files ?? fileFieldsOf(operation.media.schema).map((field) => pngPart(field)))])
    return ctx.app.inject({ method: operation.method as 'POST', url, headers: { ...authorization, ...form.headers }, payload: form.payload })
  }

  it('finds the operations that take a body in the document', () => {
    expect(operations.filter((operation) => operation.kind === 'json').length).toBeGreaterThan(40)
    expect(operations.map((operation) => operation.name)).toEqual(expect.arrayContaining(['POST /api/v1/orders', 'PATCH /api/v1/users/me', 'POST /api/v1/seller/kyc/step2']))
  })

  for (const operation of operations) {
    it(`${operation.name}: accepts each example of its body (2xx)`, async () => {
      const examples = examplesOf(operation.media, operation.kind)
      if (operation.kind === 'json') expect(examples.length, `${operation.name} has no request body example: add \`examples\` to its body schema`).toBeGreaterThan(0)
      const required = (operation.media.schema.required as string[] | undefined) ?? []
      if (operation.kind === 'multipart') expect(required.filter((name) => !fileFieldsOf(operation.media.schema).includes(name) && !(name in (examples[0] ?? {}))), 'required text fields without an example').toEqual([])
      const validate = ajv.compile(operation.media.schema)
      // A form's example holds its text fields; its files stand beside them.
      const files = Object.fromEntries(fileFieldsOf(operation.media.schema).map((name) => [name, operation.media.schema.properties![name]!.type === 'array' ? ['(file)'] : '(file)']))
      for (const example of examples) {
        expect(validate({ ...files, ...example }) ? [] : validate.errors, `an example of ${operation.name} breaks its schema`).toEqual([])
        expect(uuidsIn(example).filter((id) => !UUID_V7.test(id)), 'example ids must be UUIDv7').toEqual([])
      }
      // A form without text fields has no example: it is sent with its files alone.
      for (const example of examples.length > 0 ? examples : [{}]) {
        const response = await send(operation, example, await (scenarios[operation.name] ?? asNewUser)(example))
        expect(response.statusCode >= 200 && response.statusCode < 300, `${operation.name} answered ${response.statusCode} to ${JSON.stringify(example)}: ${response.body}`).toBe(true)
      }
    })
  }
})
