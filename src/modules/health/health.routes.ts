import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, ErrorBody, ok } from '../../http/common.schemas.ts'
import { AppError } from '../../http/errors.ts'

const tags = ['health']
// Probes from load balancers are not API traffic: they are exempt from rate limits.
const config = { rateLimit: false as const }

export const healthRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<void> }> = async (app, { ping }) => {
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
        response: { 200: Envelope(Type.Object({ status: Type.Literal('ready') })), 503: ErrorBody },
      },
    },
    async (request) => {
      try {
        await ping()
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed')
        throw new AppError(503, 'NOT_READY', 'The database is not reachable')
      }
      return ok({ status: 'ready' as const })
    },
  )
}
