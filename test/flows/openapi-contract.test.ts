/**
 * The rules every operation shares, read from the served OpenAPI document and checked against the
 * running API: what the document states is what the validator enforces.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NUL_FREE, patternExcludesNul } from '../../src/http/route-schemas.ts'
import { listOperations, operationName, type OpenApiDocument, type Operation, type Schema } from '../fuzz/openapi.ts'
import { createFundedBuyer } from '../factories/orders.ts'
import { createSuperuser, type TestUser } from '../factories/users.ts'
import { API, createTestApp, expectError, request, type TestContext } from '../setup/test-app.ts'

type Json = Record<string, unknown>

/** Whether a string schema of the document refuses a NUL character, by pattern, format or values. */
function refusesNul(schema: Schema & Json): boolean {
  if (schema.enum !== undefined || schema.const !== undefined || schema.format !== undefined) return true
  const patterns = [schema.pattern, ...((schema.allOf as Json[] | undefined) ?? []).map((part) => part.pattern)].filter((pattern): pattern is string => typeof pattern === 'string')
  return patterns.some((pattern) => pattern === NUL_FREE || patternExcludesNul(pattern))
}

/** Every string schema inside a schema, with its path. */
function stringsIn(schema: unknown, path: string, found: [string, Schema & Json][] = []): [string, Schema & Json][] {
  if (typeof schema !== 'object' || schema === null) return found
  const node = schema as Schema & Json
  const types = [node.type ?? []].flat()
  if (types.includes('string')) found.push([path, node])
  for (const [name, property] of Object.entries(node.properties ?? {})) stringsIn(property, `${path}.${name}`, found)
  if (node.items) stringsIn(node.items, `${path}[]`, found)
  for (const keyword of ['anyOf', 'oneOf'] as const) for (const [index, branch] of (node[keyword] ?? []).entries()) stringsIn(branch, `${path}/${keyword}${index}`, found)
  return found
}

describe('the rules the OpenAPI document states for every operation', () => {
  let ctx: TestContext
  let document: OpenApiDocument & Json
  let operations: Operation[]
  let superuser: TestUser

  beforeAll(async () => {
    ctx = await createTestApp()
    document = (await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json()
    operations = listOperations(document)
    superuser = await createSuperuser(ctx)
  })
  afterAll(() => ctx?.close())

  const operationOf = (operation: Operation) => document.paths[operation.path]![operation.method.toLowerCase()] as Json & { responses: Record<string, Json> }

  it('states that no string of a body, query, path or header holds a NUL character', () => {
    const open: string[] = []
    for (const operation of operations) {
      const parameters = [...operation.pathParams, ...operation.queryParams, ...operation.headerParams]
      const strings = [...parameters.flatMap((parameter) => stringsIn(parameter.schema, `${parameter.in} ${parameter.name}`)), ...(operation.bodyKind === 'json' ? stringsIn(operation.bodySchema, 'body') : [])]
      for (const [path, schema] of strings) if (!refusesNul(schema)) open.push(`${operationName(operation)}: ${path}`)
    }
    expect(open).toEqual([])
  })

  it('refuses a NUL character where the document says so (400 naming the field)', async () => {
    expectError(await request(ctx.app, { method: 'GET', url: '/services?search=a%00b' }), 400, 'VALIDATION_ERROR', ['search'])
    expectError(await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'a@example.test', password: 'pass\u0000word' } }), 400, 'VALIDATION_ERROR', ['password'])
  })

  it('lists a 400 answer on every operation that validates a query string, headers or a JSON body (GET /uploads/{path} with a bad `expires` too)', async () => {
    const missing = operations.filter((operation) => (operation.queryParams.length > 0 || operation.headerParams.length > 0 || operation.bodyKind === 'json') && !operationOf(operation).responses['400'])
    expect(missing.map(operationName)).toEqual([])
    expectError(await request(ctx.app, { method: 'GET', url: '/uploads/avatars/a.png?expires=soon' }), 400, 'VALIDATION_ERROR', ['expires'])
  })

  it('refuses a query parameter an operation does not list, on every operation that takes a query string (400 naming it)', async () => {
    const withQuery = operations.filter((operation) => operation.queryParams.length > 0)
    expect(withQuery.length).toBeGreaterThan(15)
    for (const operation of withQuery) {
      const url = operation.path.replace(/\{path\}/, 'avatars/a.png').replace(/\{[^}]+\}/g, '0190a000-0000-7000-8000-00000000abcd')
      const response = await ctx.app.inject({ method: operation.method, url: `${url}?unexpected=1`, headers: { authorization: `Bearer ${superuser.accessToken}` } })
      expect(response.statusCode, `${operationName(operation)}: ${response.body}`).toBe(400)
      expect(response.json().error.details, operationName(operation)).toContainEqual({ field: 'unexpected', message: 'is not an accepted field' })
    }
  })

  it('states the Idempotency-Key rule as a pattern, and the validator applies it, naming the header as documented', async () => {
    const header = (operationOf(operations.find((operation) => operationName(operation) === 'POST /api/v1/wallet/deposits')!).parameters as Json[]).find((parameter) => parameter.name === 'Idempotency-Key')!
    expect(header.schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' })
    const buyer = await createFundedBuyer(ctx, 0)
    for (const key of ['my key', 'k'.repeat(256), 'clé']) {
      expectError(await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: buyer.accessToken, headers: { 'idempotency-key': key }, payload: { amount: 10 } }), 400, 'VALIDATION_ERROR', ['Idempotency-Key'])
    }
  })

  it('states two decimals as multipleOf 0.01 and takes a whole number of cents within floating-point error (57 x 0.01 = 0.5700000000000001)', async () => {
    const deposit = operations.find((operation) => operationName(operation) === 'POST /api/v1/wallet/deposits')!
    expect(deposit.bodySchema?.properties?.amount).toMatchObject({ multipleOf: 0.01 })
    const buyer = await createFundedBuyer(ctx, 0)
    const response = await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: buyer.accessToken, payload: { amount: 57 * 0.01 } })
    expect(response.statusCode, response.body).toBe(201)
    const wallet = await request(ctx.app, { method: 'GET', url: '/wallet', token: buyer.accessToken })
    expect(wallet.json().data.balance).toBe(0.57)
    expectError(await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: buyer.accessToken, payload: { amount: 10.001 } }), 400, 'VALIDATION_ERROR', ['amount'])
  })

  it('states "one of these fields" rules as anyOf/oneOf, and names the first field when none is sent', async () => {
    const body = (name: string) => operations.find((operation) => operationName(operation) === name)!.bodySchema as Json
    expect(body('POST /api/v1/auth/refresh').anyOf).toEqual([{ required: ['refreshToken'] }, { required: ['refresh'] }])
    expect(body('POST /api/v1/auth/register').anyOf).toEqual([{ required: ['fullName'] }, { required: ['name'] }])
    expect(body('POST /api/v1/messages').oneOf).toEqual([{ required: ['conversationId'] }, { required: ['recipientId'] }])
    const payout = body('POST /api/v1/wallet/payout')
    expect(payout.discriminator).toEqual({ propertyName: 'method' })
    expect((payout.oneOf as Json[]).map((branch) => (branch.properties as Json).details)).toMatchObject([{ required: ['accountNumber', 'bankName'] }, { required: ['email'] }])
    const refused = await request(ctx.app, { method: 'POST', url: '/auth/refresh', payload: {} })
    expect(refused.json().error.details).toEqual([{ field: 'refreshToken', message: 'is required (send `refreshToken` or `refresh`)' }])
    const both = await request(ctx.app, { method: 'POST', url: '/messages', token: superuser.accessToken, payload: { conversationId: '0190a000-0000-7000-8000-00000000abcd', recipientId: '0190a000-0000-7000-8000-00000000abce', content: 'hi' } })
    expect(both.json().error.details).toEqual([{ field: 'recipientId', message: 'must not be sent with `conversationId`: send one of them' }])
  })

  it('states real dates as format date, and webhook addresses as format uri', async () => {
    const step1 = operations.find((operation) => operationName(operation) === 'POST /api/v1/seller/kyc/step1')!
    expect(step1.bodySchema?.properties?.dateOfBirth).toMatchObject({ format: 'date' })
    const webhooks = operations.find((operation) => operationName(operation) === 'POST /api/v1/admin/webhooks')!
    expect(webhooks.bodySchema?.properties?.url).toMatchObject({ format: 'uri' })
    expectError(await request(ctx.app, { method: 'POST', url: '/seller/kyc/step1', token: superuser.accessToken, payload: { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '2003-02-30', country: 'GB', phone: '+442071838750' } }), 400, 'VALIDATION_ERROR', [
      'dateOfBirth',
    ])
  })

  it('links each operation that creates something to the operations that act on it, by operationId and a path parameter of theirs', () => {
    const byId = new Map(operations.map((operation) => [operationOf(operation).operationId as string, operation]))
    const links: [string, Json][] = []
    for (const operation of operations) {
      for (const response of Object.values(operationOf(operation).responses)) for (const link of Object.values((response.links ?? {}) as Record<string, Json>)) links.push([operationName(operation), link])
    }
    for (const [from, link] of links) {
      const target = byId.get(link.operationId as string)
      expect(target, `${from} links to ${String(link.operationId)}`).toBeDefined()
      for (const [name, expression] of Object.entries(link.parameters as Record<string, string>)) {
        expect(target!.pathParams.map((parameter) => parameter.name), `${from} -> ${String(link.operationId)}`).toContain(name)
        expect(expression).toMatch(/^\$response\.body#\/data\/\w+$/)
      }
    }
    const targetsOf = (from: string) => links.filter(([name]) => name === from).map(([, link]) => link.operationId)
    expect(targetsOf('POST /api/v1/services')).toEqual(expect.arrayContaining(['getServicesByServiceId', 'putServicesByServiceId', 'postAdminServicesByServiceIdApprove']))
    expect(targetsOf('POST /api/v1/orders')).toEqual(expect.arrayContaining(['getOrdersByOrderId', 'putOrdersByOrderIdStatus']))
    expect(targetsOf('POST /api/v1/messages')).toContain('getMessagesConversationsByConversationId')
    expect(targetsOf('POST /api/v1/wallet/payout')).toEqual(expect.arrayContaining(['postWalletPayoutsByPayoutIdCancel', 'postAdminPayoutsByPayoutIdApprove']))
  })
})
