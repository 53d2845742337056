import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { commonErrors, fail } from '../lib/errors.ts'
import { localStore, redisStore, type CountCallback, type CountingStore } from './rate-limit-stores-adapter.ts'

export type RateLimitBucket = 'auth' | 'uploads' | 'general'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which rate limit of docs/api-conventions.md applies; `general` when absent. */
    rateLimitBucket?: RateLimitBucket
  }
}

export interface RateLimitOptions {
  limits: Record<RateLimitBucket, number>
  windowSeconds: number
  redis?: Redis
  logger: FastifyBaseLogger
}

const NAMESPACE = 'marketplace-rl:'
/** A Redis outage is logged at most this often, not once per request. */
const WARN_EVERY_MS = 60_000

/**
 * Counts in Redis when it answers, and in this process when it does not. Without Redis the limit
 * holds per instance instead of across instances: weaker, but never "no limit at all", and the
 * headers report the count that was really applied.
 */
export class RateLimitCounter {
  private readonly local = localStore(20_000)
  private readonly shared: CountingStore | undefined
  private lastWarning = 0
  degradedSince: Date | undefined

  constructor(
    private readonly redis: Redis | undefined,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.shared = redis ? redisStore(redis, NAMESPACE) : undefined
  }

  /** `shared` with Redis, `local` without it, `degraded` while Redis is configured but unreachable. */
  get state(): 'shared' | 'local' | 'degraded' {
    if (!this.redis) return 'local'
    // Not connected counts as degraded even before a request has had to fall back.
    return this.degradedSince || this.redis.status !== 'ready' ? 'degraded' : 'shared'
  }

  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void {
    // Not connected: fail over at once instead of waiting on a command that cannot be sent.
    if (!this.shared || this.redis?.status !== 'ready') {
      if (this.shared) this.fellBack(new Error(`Redis is ${this.redis?.status ?? 'absent'}`))
      this.local.incr(key, callback, timeWindow, max)
      return
    }
    this.shared.incr(
      key,
      (error, result) => {
        if (error || !result) {
          this.fellBack(error ?? new Error('no answer from Redis'))
          this.local.incr(key, callback, timeWindow, max)
          return
        }
        if (this.degradedSince) {
          this.logger.info({ since: this.degradedSince }, 'rate limits are shared through Redis again')
          this.degradedSince = undefined
        }
        callback(null, result)
      },
      timeWindow,
      max,
    )
  }

  private fellBack(error: Error): void {
    this.degradedSince ??= new Date()
    const now = Date.now()
    if (now - this.lastWarning < WARN_EVERY_MS) return
    this.lastWarning = now
    this.logger.warn({ err: error }, 'Redis is unreachable: rate limits are counted in this process only until it is back')
  }
}

const bucketOf = (request: FastifyRequest): RateLimitBucket => request.routeOptions.config?.rateLimitBucket ?? 'general'

const BUCKET_WORDS: Record<RateLimitBucket, string> = { auth: 'authentication requests', uploads: 'uploads', general: 'requests' }

/**
 * Buckets (docs/api-conventions.md): authentication routes per IP; uploads and everything else per user, or per IP
 * for anonymous callers. With Redis the counters are shared by every instance.
 */
export const rateLimits = fp(async (app: FastifyInstance, options: RateLimitOptions & { counter: RateLimitCounter }) => {
  const { counter } = options
  await app.register(rateLimit, {
    global: true,
    timeWindow: options.windowSeconds * 1000,
    max: (request) => options.limits[bucketOf(request)],
    keyGenerator: (request) => {
      const bucket = bucketOf(request)
      const userId = request.session?.actor.id ?? request.uncheckedCaller?.claims.sub
      const caller = bucket !== 'auth' && userId ? `user:${userId}` : `ip:${request.ip}`
      return `${bucket}:${caller}`
    },
    // The plugin constructs the store itself; this one is shared with /ready, which reports its state.
    store: function SharedCounter() {
      return counter
    } as unknown as never,
    errorResponseBuilder: (request, context) => {
      const bucket = bucketOf(request)
      const retryIn = Math.max(1, Math.ceil(context.ttl / 1000))
      return fail(
        commonErrors.RATE_LIMITED,
        `Too many ${BUCKET_WORDS[bucket]}: the limit is ${context.max} per ${options.windowSeconds} seconds; retry in ${retryIn} seconds`,
      )
    },
  })

  // The plugin reports seconds until reset; clients get the Unix time of the reset.
  app.addHook('onSend', (_request, reply, payload, done) => {
    const remaining = reply.getHeader('x-ratelimit-reset')
    if (remaining !== undefined) reply.header('x-ratelimit-reset', Math.ceil(Date.now() / 1000) + Number(remaining))
    done(null, payload)
  })
})
