import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { notFound, unauthenticated } from '../lib/errors.ts'
import type { Metrics } from '../platform/metrics/metrics.ts'
import { bearerToken } from './auth-hooks.ts'

export interface MetricsOptions {
  metrics: Metrics
  /** `/metrics` requires `Authorization: Bearer <token>`; without one it is open, or off (`null`). */
  token: string | undefined | null
}

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * Prometheus metrics (docs/operations.md "Metrics"): every answer is timed by route template,
 * and `GET /metrics` serves the text exposition, outside the API prefix and its rate limits.
 */
export const metricsPlugin = fp(async (app: FastifyInstance, { metrics, token }: MetricsOptions) => {
  app.addHook('onResponse', (request, reply, done) => {
    // The template, never the raw URL: ids in paths would make a series per resource.
    const route = request.routeOptions.url ?? 'unmatched'
    if (route !== '/metrics') metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })

  app.get('/metrics', { config: { rateLimit: false }, schema: { hide: true } }, async (request, reply) => {
    if (token === null) throw notFound('Route')
    if (token !== undefined) {
      const given = bearerToken(request)
      if (!given || !sameSecret(given, token)) throw unauthenticated('A valid metrics token is required')
    }
    return reply.type(metrics.contentType).send(await metrics.render())
  })
})
