/**
 * The last pass over the OpenAPI document before it is served (`@fastify/swagger`'s
 * `transformObject`): what the route schemas cannot say themselves, or say only for the validator.
 */

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

/** Removes keywords meant for the validator only (ajv-errors' `errorMessage`), at any depth. */
function stripValidatorKeywords(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) stripValidatorKeywords(item)
    return
  }
  if (node === null || typeof node !== 'object') return
  delete (node as Json).errorMessage
  for (const value of Object.values(node)) stripValidatorKeywords(value)
}

export function polishDocument(document: Json): Json {
  stripValidatorKeywords(document)
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>
  const polished: Record<string, Record<string, Json>> = {}
  for (const [rawPath, item] of Object.entries(paths)) {
    // `/uploads/*` is a wildcard route: OpenAPI names it as a parameter.
    const path = rawPath === '/' ? rawPath : rawPath.replace(/\{\*\}$/, '{path}').replace(/\/$/, '')
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      operation.operationId ??= operationIdOf(method, path)
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
  return document
}
