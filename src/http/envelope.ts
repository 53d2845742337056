/**
 * The two shapes of an answer (docs/decisions/0121). Routes always produce the wrapped one,
 * `{ success: true, data }` or `{ success: false, error }`, and it is what the idempotency store
 * keeps. A client may ask for the payload bare with `Prefer: envelope=none` (RFC 7240), or a
 * deployment may make bare its default (`RESPONSE_ENVELOPE=none`) and a client ask for the
 * envelope with `Prefer: envelope=wrapped`. The shape is changed in one place, as the answer
 * leaves (`shapeAnswer`, called by the app's one `onSend` hook), for every JSON answer: route
 * results, errors, 404 and 405, rate limits and the answers sent as JSON text.
 */

import type { FastifyReply, FastifyRequest } from 'fastify'

export type EnvelopeShape = 'wrapped' | 'none'

/**
 * The envelope a `Prefer` header asks for, or undefined. Preferences are comma-separated, each
 * `name[=value]` with `;` parameters after it; names are case-insensitive and values may be
 * quoted. Only the first `envelope` counts (RFC 7240 section 2); an unknown value asks nothing.
 */
export function preferredEnvelope(prefer: string | string[] | undefined): EnvelopeShape | undefined {
  if (prefer === undefined) return undefined
  for (const preference of (Array.isArray(prefer) ? prefer.join(',') : prefer).split(',')) {
    const token = preference.split(';', 1)[0]!
    const equals = token.indexOf('=')
    const name = (equals < 0 ? token : token.slice(0, equals)).trim().toLowerCase()
    if (name !== 'envelope') continue
    const value = equals < 0 ? '' : token.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase()
    return value === 'none' || value === 'wrapped' ? value : undefined
  }
  return undefined
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A page as bare answers give it: `{ results, count, page, pages, hasNext, hasPrev }` (`count` is
 * the total), then what else the pagination carries (`limit`, `nextCursor`, `totalIsExact`) and
 * any other field of the page.
 */
function barePage(data: Json): Json | undefined {
  const { items, pagination, ...rest } = data
  if (!Array.isArray(items) || !isObject(pagination) || typeof pagination.total !== 'number') return undefined
  const { total, page, pages, hasNext, hasPrev, ...more } = pagination
  return { results: items, count: total, page, pages, hasNext, hasPrev, ...more, ...rest }
}

/** The bare form of a wrapped answer: the payload (a page reshaped), or `{ error }`; undefined for anything else. */
export function bareBody(body: unknown): unknown {
  if (!isObject(body)) return undefined
  if (body.success === true && 'data' in body) return (isObject(body.data) && barePage(body.data)) || body.data
  if (body.success === false && isObject(body.error)) return { error: body.error }
  return undefined
}

/** Every wrapped answer, as serialised, starts so (the envelope's schemas list `success` first). */
const ENVELOPE_START = '{"success":'

/** Whether the reply is a JSON answer (by its content type): the envelope reshapes it, and it goes without the headers only documents act on. */
export const isJsonAnswer = (reply: FastifyReply) => String(reply.getHeader('content-type') ?? '').startsWith('application/json')

/** The wrapped text of the answers sent bare, for the idempotency store. */
const wrappedTexts = new WeakMap<FastifyRequest, string>()

/**
 * The answer in the shape the request asked for (or the deployment's default). Without a
 * `Prefer` header on a wrapped deployment this is one header lookup. Reshaping parses the text
 * the route's serialiser wrote (so the response schema has already applied its allow-list) and
 * writes the bare form; `Preference-Applied` tells the client its preference was followed.
 */
export function shapeAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown, fallback: EnvelopeShape): unknown {
  const header = request.headers.prefer
  if (header === undefined && fallback === 'wrapped') return payload
  const asked = preferredEnvelope(header)
  const shape = asked ?? fallback
  if (typeof payload !== 'string' || !payload.startsWith(ENVELOPE_START) || !isJsonAnswer(reply)) return payload
  if (shape === 'wrapped') {
    if (asked) reply.header('preference-applied', 'envelope=wrapped')
    return payload
  }
  let bare: unknown
  try {
    bare = bareBody(JSON.parse(payload))
  } catch {
    return payload
  }
  if (bare === undefined) return payload
  wrappedTexts.set(request, payload)
  if (asked) reply.header('preference-applied', 'envelope=none')
  return JSON.stringify(bare)
}

/** The answer as the route produced it (wrapped), whichever shape was sent: what an idempotent replay starts from. */
export const wrappedAnswer = (request: FastifyRequest, payload: unknown): unknown => wrappedTexts.get(request) ?? payload

/**
 * A documented response schema in the bare shape: the `data` schema of a success (a page as
 * `results`, `count`, ...), `{ error }` for an error; any other schema unchanged. The OpenAPI
 * document of a deployment whose default is bare is written with it.
 */
export function bareSchema(schema: unknown): unknown {
  if (!isObject(schema) || !isObject(schema.properties)) return schema
  const { success, data, error } = schema.properties
  if (!isObject(success)) return schema
  // TypeBox writes a literal as `const`; the OpenAPI document as a one-value `enum`.
  const value = Array.isArray(success.enum) && success.enum.length === 1 ? success.enum[0] : success.const
  if (value === false && error !== undefined) {
    return { type: 'object', properties: { error }, required: ['error'], ...(schema.description !== undefined && { description: schema.description }) }
  }
  if (value !== true || data === undefined) return schema
  return bareSchemaOfPage(data) ?? data
}

function bareSchemaOfPage(data: unknown): Json | undefined {
  if (!isObject(data) || !isObject(data.properties)) return undefined
  const { items, pagination, ...rest } = data.properties
  if (!isObject(items) || !isObject(pagination) || !isObject(pagination.properties)) return undefined
  const { total, page, pages, hasNext, hasPrev, ...more } = pagination.properties
  if (total === undefined) return undefined
  const properties = { results: items, count: { ...(total as Json), description: 'Every item of the list, on all pages.' }, page, pages, hasNext, hasPrev, ...more, ...rest }
  const required = [...new Set(['results', 'count', ...((pagination.required as string[] | undefined) ?? []).filter((name) => name !== 'total'), ...((data.required as string[] | undefined) ?? []).filter((name) => name !== 'items' && name !== 'pagination')])]
  return { ...data, properties: Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined)), required }
}
