import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, callerOf, requireAuth } from '../../http/auth-hooks.ts'
import { withForm } from '../../http/multipart.ts'
import { idempotencyErrors } from '../../platform/idempotency/idempotency.ts'
import { walletErrors } from '../wallet/wallet.module.ts'
import { ordersErrors } from './orders.errors.ts'
import { ChangeStatusBody, DELIVERY_FILES_MAX, DeliveryForm, MESSAGE_MAX, Order, OrdersQuery, PlaceOrderBody } from './orders.schemas.ts'
import type { OrdersService } from './orders.service.ts'

const tags = ['orders']
const security = [{ bearerAuth: [] }]
const OrderParams = IdParams('orderId')
const VISIBILITY = 'Only its buyer and seller, and staff with view_orders, see an order: anyone else gets 404.'

export const ordersRoutes: FastifyPluginAsyncTypebox<{ orders: OrdersService; tmpDir: string }> = async (app, { orders, tmpDir }) => {
  app.addHook('preValidation', requireAuth)

  app.post(
    '/orders',
    {
      config: { idempotent: true, checksSessionItself: true },
      schema: {
        tags,
        security,
        summary: 'Order a package of a service',
        description:
          'The total (package plus extras, priced now and copied onto the order) moves from the available balance into escrow. The service must be active (404 otherwise) and not your own. Send an `Idempotency-Key` header to make a retry safe.',
        body: PlaceOrderBody,
        response: responses({ 201: Envelope(Order) }, 400, 401, 404, idempotencyErrors.IDEMPOTENCY_KEY_IN_USE, idempotencyErrors.IDEMPOTENCY_KEY_REUSED, ordersErrors.OWN_SERVICE, walletErrors.INSUFFICIENT_FUNDS),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await orders.placeOrder(callerOf(request), request.body))),
  )

  app.get(
    '/orders/purchases',
    { schema: { tags, security, summary: "The caller's orders as buyer", description: 'Newest first; optional `status`.', querystring: OrdersQuery, response: responses({ 200: Envelope(Page(Order)) }, 400, 401) } },
    async (request) => ok(await orders.listPurchases(actorOf(request), request.query)),
  )

  app.get(
    '/orders/sales',
    { schema: { tags, security, summary: "The caller's orders as seller", description: 'Newest first; optional `status`.', querystring: OrdersQuery, response: responses({ 200: Envelope(Page(Order)) }, 400, 401) } },
    async (request) => ok(await orders.listSales(actorOf(request), request.query)),
  )

  app.get(
    '/orders/:orderId',
    { schema: { tags, security, summary: 'One order', description: VISIBILITY, params: OrderParams, response: responses({ 200: Envelope(Order) }, 401, 404) } },
    async (request) => ok(await orders.getOrder(actorOf(request), request.params.orderId)),
  )

  app.put(
    '/orders/:orderId/status',
    {
      schema: {
        tags,
        security,
        summary: 'Move an order',
        description: `Accept, cancel, ask for a revision, complete, dispute, or (staff) cancel and resolve disputes, as the table in the body's description allows; \`allowedActions\` on the order lists the caller's moves. Staff without the move's permission get 403. ${VISIBILITY}`,
        params: OrderParams,
        body: ChangeStatusBody,
        response: responses({ 200: Envelope(Order) }, 400, 401, 403, 404, ordersErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await orders.changeStatus(actorOf(request), request.params.orderId, request.body.status, request.body.reason)),
  )

  app.post(
    '/orders/:orderId/deliver',
    {
      config: { rateLimitBucket: 'uploads' },
      schema: {
        tags,
        security,
        summary: 'Deliver an order (seller)',
        description: `multipart/form-data: \`message\` (1 to ${MESSAGE_MAX} characters) and 1 to ${DELIVERY_FILES_MAX} \`files\` (any type, 10 MB each), while the order is in progress. The files are private to the two parties and staff with view_orders. The order completes by itself ORDER_AUTO_COMPLETE_DAYS after the latest delivery unless the buyer acts. ${VISIBILITY}`,
        ...DeliveryForm.schema,
        params: OrderParams,
        response: responses({ 200: Envelope(Order) }, 400, 401, 404, 415, ordersErrors.INVALID_TRANSITION),
      },
    },
    async (request) =>
      ok(
        await withForm(request, DeliveryForm, tmpDir, ({ files, fields }) => orders.deliverOrder(actorOf(request), request.params.orderId, fields.message, files)),
      ),
  )
}
