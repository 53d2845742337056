import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, ok, responses } from '../../http/common.schemas.ts'
import { requirePermission } from '../../http/auth-hooks.ts'
import { ListQuery, MessagePage } from './messaging.schemas.ts'
import type { MessagingService } from './messaging.service.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]

/** `/admin/orders/{orderId}/messages`: the conversation of an order, read-only, for staff who handle orders. */
export const messagingAdminRoutes: FastifyPluginAsyncTypebox<{ messaging: MessagingService }> = async (app, { messaging }) => {
  app.get(
    '/admin/orders/:orderId/messages',
    {
      preValidation: requirePermission('view_orders'),
      schema: {
        tags,
        security,
        summary: "An order's conversation, read-only (view_orders)",
        description:
          'The messages between the buyer and the seller of an order, newest first (default limit 50), paged with `page` or `cursor` like a participant reads them. Reading marks nothing read and tells nobody. Direct conversations are not open to staff. An unknown order is 404.',
        params: IdParams('orderId'),
        querystring: ListQuery(50),
        response: responses({ 200: Envelope(MessagePage) }, 400, 401, 403, 404),
      },
    },
    async (request) => ok(await messaging.orderMessagesForStaff(request.params.orderId, request.query)),
  )
}
