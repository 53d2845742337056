/**
 * The last pass over the OpenAPI document before it is served (`@fastify/swagger`'s
 * `transformObject`): what the route schemas cannot say themselves, or say only for the validator.
 */

import { ErrorBody } from './common.schemas.ts'

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

export function polishDocument(document: Json, options: { maxUploadBytes: number }): Json {
  describeSchemas(document, options.maxUploadBytes)
  // The API is public, not an internal inventory item (OWASP API9).
  for (const server of (document.servers ?? []) as Json[]) server['x-internal'] ??= false
  const components = (document.components ??= {}) as Json
  const { $id: _id, ...errorBody } = ErrorBody as unknown as Json
  components.schemas = { ...(components.schemas as Json | undefined), ErrorBody: errorBody }
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
