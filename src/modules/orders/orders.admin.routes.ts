import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission } from '../../http/auth-hooks.ts'
import { ordersErrors } from './orders.errors.ts'
import { Order, StaffCancelBody, StaffOrdersQuery } from './orders.schemas.ts'
import type { OrdersService } from './orders.service.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]

export const ordersAdminRoutes: FastifyPluginAsyncTypebox<{ orders: OrdersService }> = async (app, { orders }) => {
  app.get(
    '/admin/orders',
    {
      preValidation: requirePermission('view_orders'),
      schema: { tags, security, summary: 'Orders for staff (view_orders)', description: 'Newest first; filters `status`, `buyerId`, `sellerId`.', querystring: StaffOrdersQuery, response: responses({ 200: Envelope(Page(Order)) }, 400, 401, 403) },
    },
    async (request) => ok(await orders.listForStaff(actorOf(request), request.query)),
  )

  app.post(
    '/admin/orders/:orderId/cancel',
    {
      preValidation: requirePermission('manage_orders'),
      schema: {
        tags,
        security,
        summary: 'Cancel an order (manage_orders)',
        description: 'A pending or in-progress order: the buyer is refunded. Disputes are resolved through `PUT /orders/{orderId}/status` (resolve_disputes).',
        params: IdParams('orderId'),
        body: StaffCancelBody,
        response: responses({ 200: Envelope(Order) }, 400, 401, 403, 404, ordersErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await orders.cancelOrderAsStaff(actorOf(request), request.params.orderId, request.body?.reason)),
  )
}
