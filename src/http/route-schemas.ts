/**
 * Rules every route's input shares, written into each route's schema as the route is registered.
 * The validator and the OpenAPI document both read that schema, so what the document calls valid
 * is what the API accepts, without each module repeating the rules:
 *
 * - no string holds a NUL character (PostgreSQL cannot store one in text): a string whose
 *   pattern, format or values do not already exclude it gets a pattern that does;
 * - a query string names only the parameters the route documents (400 on any other);
 * - a route that validates a query string, headers or a body says it may answer 400.
 */

import type { FastifyInstance, RouteOptions } from 'fastify'
import { errorResponse } from './common.schemas.ts'

type Json = Record<string, unknown>

/** Any text without a NUL character. */
export const NUL_FREE = '^[^\\u0000]*$'

/** Formats whose values cannot hold a NUL character (`binary` is a file part, not text). */
const NUL_FREE_FORMATS = new Set(['uuid', 'date', 'date-time', 'time', 'email', 'uri', 'binary'])

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const hasType = (schema: Json, type: string) => schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type))

/**
 * Whether a pattern matches only strings without NUL: anchored at both ends (it must match the
 * whole string) and built only of characters and classes that cannot match NUL (no `.`, no
 * negated class, no `\S`, `\W`, `\D`, no `\x00` or `\u0000`, no alternation outside a group,
 * which would lift an anchor).
 */
export function patternExcludesNul(pattern: string): boolean {
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) return false
  let depth = 0
  let inClass = false
  for (let index = 1; index < pattern.length - 1; index++) {
    const char = pattern[index]!
    if (char === '\\') {
      const escaped = pattern[++index] ?? ''
      // A code point is fine unless it is NUL (the lowest, so a range includes it only by starting at it).
      const digits = escaped === 'x' ? 2 : escaped === 'u' ? 4 : 0
      if (digits > 0) {
        const code = pattern.slice(index + 1, index + 1 + digits)
        if (!new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(code) || Number.parseInt(code, 16) === 0) return false
        index += digits
        continue
      }
      if ('SWDc0pP'.includes(escaped)) return false
      continue
    }
    if (inClass) {
      if (char === ']') inClass = false
      continue
    }
    if (char === '[') {
      if (pattern[index + 1] === '^') return false
      inClass = true
    } else if (char === '.') return false
    else if (char === '(') depth++
    else if (char === ')') depth--
    else if (char === '|' && depth === 0) return false
  }
  return !inClass && depth === 0
}

const excludesNul = (schema: Json): boolean =>
  schema.enum !== undefined || schema.const !== undefined || (typeof schema.format === 'string' && NUL_FREE_FORMATS.has(schema.format)) || (typeof schema.pattern === 'string' && patternExcludesNul(schema.pattern))

const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const

/** The schema with the NUL rule on every string it describes, copied where it changes (TypeBox schemas are shared between routes). */
export function withoutNul(node: unknown): unknown {
  if (!isObject(node)) return node
  let schema: Json = node
  const set = (key: string, value: unknown) => {
    if (schema[key] === value) return
    if (schema === node) schema = { ...node }
    schema[key] = value
  }
  if (isObject(schema.properties)) {
    const properties = schema.properties
    const changed = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, withoutNul(property)]))
    if (Object.keys(changed).some((name) => changed[name] !== properties[name])) set('properties', changed)
  }
  if (isObject(schema.items)) set('items', withoutNul(schema.items))
  if (isObject(schema.additionalProperties)) set('additionalProperties', withoutNul(schema.additionalProperties))
  for (const keyword of SUBSCHEMA_LISTS) {
    const list = schema[keyword]
    if (!Array.isArray(list)) continue
    const changed = list.map(withoutNul)
    if (changed.some((branch, index) => branch !== list[index])) set(keyword, changed)
  }
  if (hasType(schema, 'string') && !excludesNul(schema)) {
    // One `pattern` per schema: a second one goes in an `allOf`, which tools and validators combine.
    if (schema.pattern === undefined) set('pattern', NUL_FREE)
    else set('allOf', [...((schema.allOf as unknown[] | undefined) ?? []), { pattern: NUL_FREE }])
  }
  return schema
}

const takesMultipart = (schema: Json) => Array.isArray(schema.consumes) && schema.consumes.includes('multipart/form-data')

/** The route's schema with the shared rules; the same object when nothing changes. */
export function withInputRules(schema: Json | undefined): Json | undefined {
  if (!schema) return schema
  const result: Json = { ...schema }
  if (isObject(schema.querystring)) {
    result.querystring = withoutNul(schema.querystring.additionalProperties === undefined ? { ...schema.querystring, additionalProperties: false } : schema.querystring)
  }
  if (isObject(schema.params)) result.params = withoutNul(schema.params)
  if (isObject(schema.headers)) result.headers = withoutNul(schema.headers)
  // A multipart form is read by the handler, field by field: its schema describes, it does not validate.
  if (isObject(schema.body) && !takesMultipart(schema)) result.body = withoutNul(schema.body)
  const response = schema.response
  if (isObject(response) && response['400'] === undefined && response['4xx'] === undefined && [schema.querystring, schema.headers, schema.body].some(isObject)) {
    result.response = { ...response, 400: errorResponse(400) }
  }
  return result
}

/** Applies the shared rules to every route registered after this call. */
export function shareInputRules(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    route.schema = withInputRules(route.schema as Json | undefined)
  })
}
