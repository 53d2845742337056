import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission } from '../../http/auth-hooks.ts'
import type { CatalogueService } from './catalogue.service.ts'
import { catalogueErrors } from './catalogue.errors.ts'
import { ModerationQuery, RejectServiceBody, Service } from './services.schemas.ts'

const security = [{ bearerAuth: [] }]
const ServiceParams = IdParams('serviceId')

/** `/admin/services`: the moderation queue and its decisions (staff with view_services / approve_services). */
export const servicesAdminRoutes: FastifyPluginAsyncTypebox<{ services: CatalogueService }> = async (app, { services }) => {
  app.get(
    '/admin/services',
    {
      preValidation: requirePermission('view_services'),
      schema: {
        tags: ['admin'],
        security,
        summary: 'Services for moderation (view_services)',
        description: 'By status (default `pending`), oldest first.',
        querystring: ModerationQuery,
        response: responses({ 200: Envelope(Page(Service)) }, 400, 401, 403),
      },
    },
    async (request) => ok(await services.listForModeration(actorOf(request), request.query.status ?? 'pending', request.query)),
  )

  app.post(
    '/admin/services/:serviceId/approve',
    {
      preValidation: requirePermission('approve_services'),
      schema: {
        tags: ['admin'],
        security,
        summary: 'Approve a pending service (approve_services)',
        description: 'pending -> active (422 `INVALID_TRANSITION` otherwise); emits `service.approved`.',
        params: ServiceParams,
        response: responses({ 200: Envelope(Service) }, 401, 403, 404, catalogueErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await services.approveService(actorOf(request), request.params.serviceId)),
  )

  app.post(
    '/admin/services/:serviceId/reject',
    {
      preValidation: requirePermission('approve_services'),
      schema: {
        tags: ['admin'],
        security,
        summary: 'Reject a pending service (approve_services)',
        description: 'pending -> rejected with a reason the seller sees (422 `INVALID_TRANSITION` otherwise). Editing it resubmits it.',
        params: ServiceParams,
        body: RejectServiceBody,
        response: responses({ 200: Envelope(Service) }, 400, 401, 403, 404, catalogueErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await services.rejectService(actorOf(request), request.params.serviceId, request.body.reason)),
  )
}
