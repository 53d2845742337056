import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import { AppError } from './errors.ts'

export type RateLimitBucket = 'auth' | 'uploads' | 'general'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which limit of spec section 8 applies; `general` when absent. */
    rateLimitBucket?: RateLimitBucket
  }
}

export interface RateLimitOptions {
  limits: Record<RateLimitBucket, number>
  windowSeconds: number
  redis?: Redis
}

const bucketOf = (request: FastifyRequest): RateLimitBucket => request.routeOptions.config?.rateLimitBucket ?? 'general'

/**
 * Spec section 8: authentication routes per IP; uploads and everything else per user, or per IP
 * for anonymous callers. With Redis the counters are shared by every instance.
 */
export const rateLimits = fp(async (app: FastifyInstance, options: RateLimitOptions) => {
  await app.register(rateLimit, {
    global: true,
    timeWindow: options.windowSeconds * 1000,
    max: async (request) => options.limits[bucketOf(request)],
    keyGenerator: async (request) => {
      const bucket = bucketOf(request)
      const caller = bucket !== 'auth' && request.session ? `user:${request.session.actor.id}` : `ip:${request.ip}`
      return `${bucket}:${caller}`
    },
    ...(options.redis && { redis: options.redis, nameSpace: 'marketplace-rl:' }),
    // The limiter must not become an outage: if Redis is unreachable, requests go through.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new AppError(429, 'RATE_LIMITED', `Too many requests; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds`),
  })

  // The plugin reports seconds until reset; the spec wants the Unix time of the reset.
  app.addHook('onSend', async (_request, reply) => {
    const remaining = reply.getHeader('x-ratelimit-reset')
    if (remaining !== undefined) reply.header('x-ratelimit-reset', Math.ceil(Date.now() / 1000) + Number(remaining))
  })
})
