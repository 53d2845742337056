import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import type { Db } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { defineErrors, fail, fieldError, unauthenticated } from '../../lib/errors.ts'
import { createIdempotencyRepository, type ClaimRef } from './idempotency.repository.ts'
import type { IdempotencyKeyRow } from './idempotency.table.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Honours an `Idempotency-Key` header (decision 0020): the first answer is replayed to a retry
     * instead of running the handler again. Only for routes that require authentication.
     */
    idempotent?: boolean
  }
}

export interface IdempotencyOptions {
  /** The outer database handle: claims and answers are written outside any handler's transaction. */
  db: Db
  clock: Clock
  /**
   * The answer as the route produced it, when the app's presentation (the envelope a request
   * prefers) changed it on the way out: the stored answer is that one, and a replay is shaped for
   * the request that asks again. Absent: the payload sent is stored.
   */
  producedAnswer?: (request: FastifyRequest, payload: unknown) => unknown
}

/** How long a key holds its answer (24 h, docs/api-conventions.md). */
export const IDEMPOTENCY_KEY_TTL_MS = DAY
export const REPLAYED_HEADER = 'Idempotent-Replayed'
const KEY_HEADER = 'idempotency-key'
/** Visible ASCII only: no spaces, controls or bytes a proxy might rewrite between two retries. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/
const KEY_RULE = 'must be 1 to 255 visible ASCII characters (no spaces)'

export const idempotencyErrors = defineErrors({
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    description: 'A request with this `Idempotency-Key` is still being processed; retry once it has finished to get its answer.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    description: 'This `Idempotency-Key` was used in the last 24 hours for a different request (another route or body); use a new key.',
  },
})

/**
 * The same value whatever the order of an object's keys or the spacing of the JSON sent, so
 * `{"a":1,"b":2}` and `{ "b": 2, "a": 1 }` are one request. Bodies are validated before this runs,
 * which bounds their depth (MAX_BODY_DEPTH), so the recursion is safe.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * What makes two requests "the same": method, route and the validated input. Path parameters and
 * the query string count too, so one key cannot be replayed against another resource.
 */
export function requestFingerprint(request: Pick<FastifyRequest, 'method' | 'params' | 'query' | 'body'> & { routeOptions: { url?: string } }): string {
  const canonical = canonicalJson({
    method: request.method,
    route: request.routeOptions.url ?? '',
    params: request.params ?? {},
    query: request.query ?? {},
    body: request.body ?? null,
  })
  return createHash('sha256').update(canonical).digest('hex')
}

/** The key of this request, or undefined when the header is absent; 400 when it is malformed. */
function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers[KEY_HEADER]
  if (header === undefined) return undefined
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) throw fieldError('Idempotency-Key', KEY_RULE)
  return header
}

/** States the header's rule in the route schema: the validator checks it, the API reference shows it. */
function withKeyHeader(schema: FastifySchema | undefined): FastifySchema {
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null
  const headers = isObject(schema?.headers) ? schema.headers : { type: 'object' }
  // Header names are case-insensitive (Fastify lowercases them for validation): one entry, spelled `Idempotency-Key` as the API reference writes it.
  const properties = Object.entries(isObject(headers.properties) ? headers.properties : {}).filter(([name]) => name.toLowerCase() !== KEY_HEADER)
  return {
    ...schema,
    headers: {
      ...headers,
      properties: {
        ...Object.fromEntries(properties),
        'Idempotency-Key': {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          pattern: KEY_PATTERN.source,
          errorMessage: KEY_RULE,
          description:
            'Optional. 1 to 255 visible ASCII characters chosen by the client, e.g. a UUID. A retry with the same key and body within 24 hours gets the first answer again (with `Idempotent-Replayed: true`) instead of repeating the operation.',
        },
      },
    },
  }
}

const asList = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks])

interface Claim extends ClaimRef {
  /** Set once the answer was stored or the key released, so nothing touches the row twice. */
  settled: boolean
}

/** The lock `claim` takes means the row it collided with cannot vanish before it is read; if it ever does, claim again rather than answer 500. */
const CLAIM_ATTEMPTS = 3

/**
 * Idempotency keys for the routes whose config says `idempotent: true`. Its hooks run after
 * authentication (onRequest) and validation, so a malformed body is a 400 that does not use up
 * the key, and keys are scoped to the caller. Registered with fastify-plugin: routes registered
 * after it anywhere in the app get the hooks.
 */
export const idempotency = fp(
  async (app: FastifyInstance, options: IdempotencyOptions) => {
    const { db, clock } = options
    const producedAnswer = options.producedAnswer ?? ((_request: FastifyRequest, payload: unknown) => payload)
    const claims = new WeakMap<FastifyRequest, Claim>()

    /** Claims the key in its own transaction, committed before the handler starts, or answers without running it. */
    async function claimKey(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
      const key = keyOf(request)
      if (key === undefined) return undefined
      if (!request.session) throw request.authError ?? unauthenticated()
      const userId = request.session.actor.id
      const fingerprint = requestFingerprint(request)

      let existing: IdempotencyKeyRow | undefined
      for (let attempt = 1; attempt <= CLAIM_ATTEMPTS && !existing; attempt++) {
        const now = clock.now()
        const expiresAt = new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS)
        const outcome = await db.transaction(async (tx) => {
          const keys = createIdempotencyRepository(tx)
          const claimed = await keys.claim({ userId, key, fingerprint, state: 'in_progress', createdAt: now, expiresAt }, now)
          return claimed ? { claimed } : { existing: await keys.find(userId, key) }
        })
        if (outcome.claimed) {
          claims.set(request, { userId, key, expiresAt: outcome.claimed.expiresAt, settled: false })
          return undefined
        }
        existing = outcome.existing
      }
      if (!existing) throw new Error(`idempotency key could be neither claimed nor read after ${CLAIM_ATTEMPTS} attempts`)

      if (existing.fingerprint !== fingerprint) {
        throw fail(idempotencyErrors.IDEMPOTENCY_KEY_REUSED, 'This Idempotency-Key was already used for a different request; use a new key for a new request')
      }
      if (existing.state === 'in_progress') {
        throw fail(idempotencyErrors.IDEMPOTENCY_KEY_IN_USE, 'A request with this Idempotency-Key is still being processed; retry once it has finished')
      }
      reply.code(existing.responseStatus!).header(REPLAYED_HEADER, 'true')
      if (existing.responseContentType !== null) reply.header('content-type', existing.responseContentType)
      // An answer that had no body and no type (a 204) is replayed without either; Fastify would
      // label an empty string text/plain.
      return reply.send(existing.responseBody === '' && existing.responseContentType === null ? undefined : existing.responseBody)
    }

    async function release(request: FastifyRequest, claim: Claim): Promise<void> {
      try {
        await createIdempotencyRepository(db).release(claim)
      } catch (error) {
        request.log.error({ err: error, idempotencyKey: claim.key }, 'could not release an idempotency key; it answers 409 until it expires')
      }
    }

    /**
     * Stores the answer as it goes out, before the client can see it, so a retry sent after the
     * answer arrived always finds it. A 5xx releases the key instead: the request may not have
     * happened, and the client should be able to try again. A 4xx is kept, because the same
     * request would fail the same way.
     */
    async function storeAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
      const claim = claims.get(request)
      if (!claim || claim.settled) return payload
      claim.settled = true
      if (reply.statusCode >= 500) {
        await release(request, claim)
        return payload
      }
      const produced = producedAnswer(request, payload)
      const body = produced === null || produced === undefined ? '' : typeof produced === 'string' ? produced : undefined
      if (body === undefined) {
        // A stream or a buffer cannot be replayed byte for byte from a text column.
        request.log.error({ idempotencyKey: claim.key, route: request.routeOptions.url }, 'an idempotent route answered with a body that cannot be stored; the key is released')
        await release(request, claim)
        return payload
      }
      const contentType = reply.getHeader('content-type')
      try {
        await createIdempotencyRepository(db).complete(claim, { status: reply.statusCode, body, contentType: typeof contentType === 'string' ? contentType : null })
      } catch (error) {
        // The operation has happened: releasing the key would let a retry do it twice. It stays
        // in progress (409) until it expires.
        request.log.error({ err: error, idempotencyKey: claim.key }, 'could not store the answer of an idempotent request; its key answers 409 until it expires')
      }
      return payload
    }

    /** An answer that never went through onSend (a hijacked reply) was not stored: free the key for a retry. */
    async function releaseUnanswered(request: FastifyRequest): Promise<void> {
      const claim = claims.get(request)
      if (!claim || claim.settled) return
      claim.settled = true
      await release(request, claim)
    }

    // Route-level hooks run after the app-wide ones: the claim is the last step before the
    // handler, and the payload stored is the one that goes out.
    app.addHook('onRoute', (route) => {
      if (route.config?.idempotent !== true) return
      route.preHandler = [...asList(route.preHandler), claimKey]
      route.onSend = [...asList(route.onSend), storeAnswer]
      route.onResponse = [...asList(route.onResponse), releaseUnanswered]
      route.schema = withKeyHeader(route.schema)
    })
  },
  { name: 'idempotency' },
)

/** Deletes expired keys in batches (short statements, no long lock on a backlog); returns how many. */
export async function sweepExpiredIdempotencyKeys(db: Db, now: Date, batchSize = 1000): Promise<number> {
  const keys = createIdempotencyRepository(db)
  let total = 0
  for (;;) {
    const deleted = await keys.deleteExpired(now, batchSize)
    total += deleted
    if (deleted < batchSize) return total
  }
}
