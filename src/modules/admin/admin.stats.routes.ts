import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, ok, responses } from '../../http/common.schemas.ts'
import { requireStaff } from '../../http/auth-hooks.ts'
import type { AdminService } from './admin.service.ts'
import { Series, SeriesQuery } from './admin.schemas.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]

/** The figures of the marketplace, for any staff: the statistics of every module and their series per day. */
export const adminStatsRoutes: FastifyPluginAsyncTypebox<{ admin: AdminService }> = async (app, { admin }) => {
  const Statistics = Type.Object(Object.fromEntries(admin.statisticsSections().map((section) => [section.name, section.schema])), {
    description: 'One section per module that counts something: `users`, `services`, `wallet`, `kyc` (and `orders` where orders exist).',
  })
  app.get(
    '/admin/stats',
    {
      preValidation: requireStaff,
      schema: { tags, security, summary: 'Marketplace statistics (any staff)', response: responses({ 200: Envelope(Statistics) }, 401, 403) },
    },
    async () => ok(await admin.collectStatistics()),
  )

  app.get(
    '/admin/stats/series',
    {
      preValidation: requireStaff,
      schema: {
        tags,
        security,
        summary: 'A statistic per day (any staff)',
        description: 'Orders placed, accounts created or platform revenue per day (UTC) over the last `days` days, for charts.',
        querystring: SeriesQuery,
        response: responses({ 200: Envelope(Series) }, 400, 401, 403),
      },
    },
    async (request) => ok(await admin.statisticsSeries(request.query.metric, request.query.days)),
  )
}
