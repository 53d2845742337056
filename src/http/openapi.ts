/**
 * The last pass over the OpenAPI document before it is served (`@fastify/swagger`'s
 * `transformObject`): what the route schemas cannot say themselves, or say only for the validator.
 */

import { ErrorBody } from './common.schemas.ts'
import { bareSchema } from './envelope.ts'

type Json = Record<string, unknown>

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const

/** `get /api/v1/services/{serviceId}/reviews` -> `getServicesByServiceIdReviews`: stable and unique per operation. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v1/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment)
      const word = (param ? `by-${param[1]}` : segment).replace(/[^A-Za-z0-9]+(.)?/g, (_match, next?: string) => (next ? next.toUpperCase() : ''))
      return word.charAt(0).toUpperCase() + word.slice(1)
    })
  return `${method}${words.join('') || 'Index'}`
}

const INT32_MAX = 2 ** 31 - 1
const isType = (schema: Json, type: string) => schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type))

/**
 * At any depth: removes keywords meant for the validator only (ajv-errors' `errorMessage`), and
 * states what the schemas imply: an integer's width (`int32` when its bounds fit, else `int64`),
 * a UUID's length, and that a file part is at most the upload cap.
 */
function describeSchemas(node: unknown, maxUploadBytes: number): void {
  if (Array.isArray(node)) {
    for (const item of node) describeSchemas(item, maxUploadBytes)
    return
  }
  if (node === null || typeof node !== 'object') return
  const schema = node as Json
  delete schema.errorMessage
  if (isType(schema, 'integer') && schema.format === undefined) {
    const fits = typeof schema.maximum === 'number' && schema.maximum <= INT32_MAX && typeof schema.minimum === 'number' && schema.minimum >= -INT32_MAX - 1
    schema.format = fits ? 'int32' : 'int64'
  }
  if (isType(schema, 'string') && schema.maxLength === undefined) {
    if (schema.format === 'uuid') schema.maxLength = 36
    if (schema.format === 'binary') schema.maxLength = maxUploadBytes
  }
  for (const value of Object.values(schema)) describeSchemas(value, maxUploadBytes)
}

const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the current window.', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000 } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000 } },
  'X-RateLimit-Reset': { description: 'When the window resets, in Unix seconds.', schema: { type: 'integer', format: 'int64', minimum: 0, maximum: 99_999_999_999 } },
}
// CORS answers every origin or the configured ones (`CORS_ORIGINS`) on every answer.
const corsHeader = { 'Access-Control-Allow-Origin': { description: 'The origin allowed to read the answer (`CORS_ORIGINS`).', schema: { type: 'string', maxLength: 2048 } } }
const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } }

/** What every operation may answer besides its own responses: a rate limit and a bug. */
function declareCommonAnswers(path: string, operation: Json): void {
  const responses = (operation.responses ??= {}) as Record<string, Json>
  responses['500'] ??= { description: '`INTERNAL_ERROR`: a bug on our side; the message reveals nothing.', content: errorContent }
  for (const response of Object.values(responses)) response.headers = { ...corsHeader, ...(response.headers as Json | undefined) }
  // Health probes are exempt from rate limits; everything under the API prefix is counted.
  if (!path.startsWith('/api/')) return
  responses['429'] ??= { description: '`RATE_LIMITED`: over a rate limit.', content: errorContent }
  for (const [status, response] of Object.entries(responses)) {
    if (status === '500') continue
    response.headers = { ...rateLimitHeaders, ...(status === '429' && { 'Retry-After': { description: 'Seconds until the window resets.', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86_400 } } }), ...(response.headers as Json | undefined) }
  }
}

/**
 * Links from an operation that creates something to those that act on it, with the created id
 * as their path parameter, so tools (and readers) can chain them. Found by path: what a POST to
 * `/services` creates is the `{serviceId}` of `/services/{serviceId}` and of the paths under it;
 * the links whose target lives elsewhere are listed in EXTRA_LINKS.
 */
const EXTRA_LINKS: { from: string; field: string; to: string[] }[] = [
  { from: 'post /api/v1/auth/register', field: 'id', to: ['get /api/v1/users/{userId}', 'get /api/v1/users/{userId}/stats'] },
  { from: 'post /api/v1/services', field: 'id', to: ['post /api/v1/admin/services/{serviceId}/approve', 'post /api/v1/admin/services/{serviceId}/reject'] },
  { from: 'post /api/v1/orders', field: 'id', to: ['post /api/v1/admin/orders/{orderId}/cancel'] },
  { from: 'post /api/v1/orders', field: 'serviceId', to: ['get /api/v1/services/{serviceId}'] },
  { from: 'post /api/v1/messages', field: 'conversationId', to: ['get /api/v1/messages/conversations/{conversationId}', 'post /api/v1/messages/conversations/{conversationId}/read'] },
  { from: 'post /api/v1/wallet/payout', field: 'id', to: ['post /api/v1/wallet/payouts/{payoutId}/cancel', 'post /api/v1/admin/payouts/{payoutId}/approve', 'post /api/v1/admin/payouts/{payoutId}/reject'] },
  { from: 'post /api/v1/reviews', field: 'serviceId', to: ['get /api/v1/services/{serviceId}/reviews'] },
  { from: 'post /api/v1/admin/webhooks/{webhookId}/test', field: 'id', to: ['post /api/v1/admin/webhook-deliveries/{deliveryId}/retry'] },
]

const pathParameters = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!)

function linkOperations(paths: Record<string, Record<string, Json>>, dataPointer: string): void {
  const operations = Object.entries(paths).flatMap(([path, item]) => METHODS.filter((method) => item[method]).map((method) => ({ key: `${method} ${path}`, path, method, operation: item[method]! })))
  const byKey = new Map(operations.map((entry) => [entry.key, entry]))
  /** The created resource's fields, as the success answer's `data` lists them. */
  const createdFields = (operation: Json): { status: string; fields: Json } | undefined => {
    for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
      if (!/^2\d\d$/.test(status)) continue
      const schema = ((response.content as Record<string, Json> | undefined)?.['application/json']?.schema ?? {}) as Json
      const data = (schema.properties as Record<string, Json> | undefined)?.data
      const fields = data?.properties as Json | undefined
      if (fields) return { status, fields }
    }
    return undefined
  }
  for (const source of operations) {
    if (source.method !== 'post') continue
    const created = createdFields(source.operation)
    if (!created) continue
    const targets: { key: string; field: string }[] = []
    if ('id' in created.fields && pathParameters(source.path).length === 0) {
      for (const target of operations) {
        const rest = target.path.startsWith(`${source.path}/{`) ? target.path.slice(source.path.length + 1) : undefined
        // `{path}` (a file's stored path) is not the id of what was created.
        if (rest !== undefined && pathParameters(target.path).length === 1 && pathParameters(target.path)[0] !== 'path') targets.push({ key: target.key, field: 'id' })
      }
    }
    for (const extra of EXTRA_LINKS.filter((candidate) => candidate.from === source.key && candidate.field in created.fields)) {
      for (const key of extra.to) if (byKey.has(key)) targets.push({ key, field: extra.field })
    }
    if (targets.length === 0) continue
    const response = (source.operation.responses as Record<string, Json>)[created.status]!
    const links = (response.links ??= {}) as Json
    for (const { key, field } of targets) {
      const target = byKey.get(key)!
      const operationId = String(target.operation.operationId)
      const [parameter] = pathParameters(target.path)
      links[operationId.charAt(0).toUpperCase() + operationId.slice(1)] = {
        operationId,
        parameters: { [parameter!]: `$response.body#${dataPointer}/${field}` },
        description: `\`${parameter}\` is the \`${field}\` of this answer.`,
      }
    }
  }
}

/** Every JSON answer of an operation in the bare shape (a deployment whose default is `RESPONSE_ENVELOPE=none`). */
function describeBareAnswers(operation: Json): void {
  for (const response of Object.values((operation.responses ?? {}) as Record<string, Json>)) {
    const media = (response.content as Record<string, Json> | undefined)?.['application/json']
    if (media) media.schema = bareSchema(media.schema)
  }
}

export function polishDocument(document: Json, options: { maxUploadBytes: number; bareAnswers?: boolean }): Json {
  describeSchemas(document, options.maxUploadBytes)
  // The API is public, not an internal inventory item (OWASP API9).
  for (const server of (document.servers ?? []) as Json[]) server['x-internal'] ??= false
  const components = (document.components ??= {}) as Json
  const { $id: _id, ...errorBody } = ErrorBody as unknown as Json
  components.schemas = { ...(components.schemas as Json | undefined), ErrorBody: options.bareAnswers ? bareSchema(errorBody) : errorBody }
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>
  const polished: Record<string, Record<string, Json>> = {}
  for (const [rawPath, item] of Object.entries(paths)) {
    // `/uploads/*` is a wildcard route: OpenAPI names it as a parameter.
    const path = rawPath === '/' ? rawPath : rawPath.replace(/\{\*\}$/, '{path}').replace(/\/$/, '')
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      operation.operationId ??= operationIdOf(method, path)
      declareCommonAnswers(path, operation)
      // A route that declares no security is public; a token, when sent, still identifies the caller.
      operation.security ??= [{}, { bearerAuth: [] }]
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        // A query parameter with a default may be left out, whatever the validator's schema says.
        if (parameter.in === 'query' && (parameter.schema as Json | undefined)?.default !== undefined) parameter.required = false
        if (parameter.in === 'path' && parameter.name === '*') {
          parameter.name = 'path'
          parameter.description ??= 'The stored path of the file, as in the `url` the API returned.'
        }
      }
    }
    polished[path] = { ...polished[path], ...item }
  }
  document.paths = polished
  linkOperations(polished, options.bareAnswers ? '' : '/data')
  if (options.bareAnswers) for (const item of Object.values(polished)) for (const method of METHODS) if (item[method]) describeBareAnswers(item[method])
  // Webhooks are requests the API sends: the receiver authenticates them by their signature.
  for (const item of Object.values((document.webhooks ?? {}) as Record<string, Record<string, Json>>)) {
    for (const method of METHODS) if (item[method]) item[method].security ??= [{ webhookSignature: [] }]
  }
  const schemes = (components.securitySchemes ??= {}) as Json
  if (document.webhooks) {
    schemes.webhookSignature ??= {
      type: 'apiKey',
      in: 'header',
      name: 'webhook-signature',
      description: 'Standard Webhooks signature: `v1,<base64 HMAC-SHA256>` of `webhook-id.webhook-timestamp.body` with the endpoint secret; verify it with any Standard Webhooks library.',
    }
  }
  return document
}
