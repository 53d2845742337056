import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission } from '../../http/auth-hooks.ts'
import { ordersErrors } from './orders.errors.ts'
import { Order, ResolveBody, StaffCancelBody, StaffOrdersQuery } from './orders.schemas.ts'
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

  app.post(
    '/admin/orders/:orderId/resolve',
    {
      preValidation: requirePermission('resolve_disputes'),
      schema: {
        tags,
        security,
        summary: 'Resolve a dispute by splitting the escrow (resolve_disputes)',
        description:
          'A disputed order: `refundAmount` goes from escrow to the buyer’s wallet, the rest to the seller minus the platform fee on the rest (the order’s own fee rate, rounded half-up to the cent). The order ends `completed` when the seller gets anything, `cancelled` when the refund is the whole escrow. One transaction with the audit record, the timeline entry, the e-mails to both parties and the `order.resolved` event. A `refundAmount` above what the order holds in escrow is 400 on the field. The all-or-nothing resolutions stay `PUT /orders/{orderId}/status`.',
        params: IdParams('orderId'),
        body: ResolveBody,
        response: responses({ 200: Envelope(Order) }, 400, 401, 403, 404, ordersErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await orders.resolveSplit(actorOf(request), request.params.orderId, request.body)),
  )
}
