import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fresh from 'fresh'
import { JsonText } from '../db/json-sql.ts'
import { preferredEnvelope, type EnvelopeShape } from './envelope.ts'
import { answer } from './json-text.ts'

/** An answer's data kept as JSON text, with the tag of its content. */
export interface TaggedJson<T> {
  readonly json: JsonText<T>
  /** A digest of the text: equal texts have equal tags, on every instance. */
  readonly tag: string
}

export const taggedJson = <T>(text: string): TaggedJson<T> => ({ json: new JsonText<T>(text), tag: createHash('sha256').update(text).digest('base64url').slice(0, 27) })

/**
 * Sends kept data with a strong `ETag` and `Cache-Control: public, no-cache` (any cache may keep
 * it, and asks again each time), or `304 Not Modified` when `If-None-Match` names the tag (the
 * `fresh` package reads lists, weak tags and `*`). The two shapes of an answer are two
 * representations, so the bare one has a tag of its own. The kept text is checked against the
 * route's response schema at its first answer, not at every one (decisions 0227 and 0245).
 */
export function answerTagged<T>(request: FastifyRequest, reply: FastifyReply, data: TaggedJson<T>, fallback: EnvelopeShape) {
  const shape = preferredEnvelope(request.headers.prefer) ?? fallback
  const etag = shape === 'none' ? `"${data.tag}-bare"` : `"${data.tag}"`
  reply.header('etag', etag).header('cache-control', 'public, no-cache')
  if (fresh(request.headers, { etag })) return reply.status(304).send()
  return answer(reply, data.json)
}
