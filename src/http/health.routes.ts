import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, ErrorBody, ok, responses } from './common.schemas.ts'
import { commonErrors, fail } from '../lib/errors.ts'
import { API_PREFIX } from './prefix.ts'

const tags = ['health']
// Probes from load balancers are not API traffic: they are exempt from rate limits.
const config = { rateLimit: false as const }

const Readiness = Type.Object({
  status: Type.Literal('ready'),
  checks: Type.Object({
    database: Type.Literal('ok'),
    rateLimits: Type.Union([Type.Literal('shared'), Type.Literal('local'), Type.Literal('degraded')], {
      description:
        '`shared`: counted in Redis across instances; `local`: counted in this process (no REDIS_URL); `degraded`: REDIS_URL is set but Redis is unreachable, so this instance counts on its own until it is back.',
    }),
  }),
})

export const healthRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<void>; rateLimits: () => 'shared' | 'local' | 'degraded' }> = async (app, { ping, rateLimits }) => {
  app.get(
    '/health',
    { config, schema: { tags, summary: 'Liveness: the process answers', response: { 200: Envelope(Type.Object({ status: Type.Literal('ok') })) } } },
    async () => ok({ status: 'ok' as const }),
  )

  app.get(
    '/ready',
    {
      config,
      schema: {
        tags,
        summary: 'Readiness: the database answers',
        description: 'A degraded Redis does not make the instance unready (rate limits fall back to counting in the process); `checks` says so.',
        response: { 200: Envelope(Readiness), 503: ErrorBody },
      },
    },
    async (request) => {
      try {
        await ping()
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed')
        throw fail(commonErrors.NOT_READY, 'The database is not reachable')
      }
      return ok({ status: 'ready' as const, checks: { database: 'ok' as const, rateLimits: rateLimits() } })
    },
  )
}

const ApiIndex = Type.Object({
  name: Type.String(),
  version: Type.String(),
  links: Type.Object({ self: Type.String(), docs: Type.String(), openapi: Type.String(), health: Type.String(), ready: Type.String() }),
})

/** `GET /api/v1`: where a newcomer (or a client probing the base URL) finds the reference. */
export const apiIndexRoutes: FastifyPluginAsyncTypebox<{ publicUrl: string; version: string }> = async (app, { publicUrl, version }) => {
  app.get(
    '/',
    { schema: { tags, summary: 'API index', description: 'Name, version and links to the reference.', response: responses({ 200: Envelope(ApiIndex) }) } },
    async () =>
      ok({
        name: 'Marketplace API',
        version,
        links: {
          self: `${publicUrl}${API_PREFIX}`,
          docs: `${publicUrl}/docs`,
          openapi: `${publicUrl}${API_PREFIX}/openapi.json`,
          health: `${publicUrl}/health`,
          ready: `${publicUrl}/ready`,
        },
      }),
  )
}
