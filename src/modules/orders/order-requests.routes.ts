import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, Id, IdParams, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { requestErrors } from './order-requests.errors.ts'
import { OpenRequestBody, OrderRequest, RequestMoveBody } from './order-requests.schemas.ts'
import type { OrderRequests } from './order-requests.service.ts'
import { ordersErrors } from './orders.errors.ts'
import { Order } from './orders.schemas.ts'

const tags = ['orders']
const security = [{ bearerAuth: [] }]
const VISIBILITY = 'Only its buyer and seller, and staff with view_orders, see an order: anyone else gets 404, as for a request id that is not one of the order’s.'
const RequestParams = Type.Object({ orderId: Id, requestId: Id })

type Requests = Pick<OrderRequests, 'openRequest' | 'acceptRequest' | 'declineRequest' | 'withdrawRequest'>

/** The resolution center: requests between the parties of an order (docs/orders.md). */
export const orderRequestsRoutes: FastifyPluginAsyncTypebox<{ orders: Requests; requestDays: number }> = async (app, { orders, requestDays }) => {
  app.addHook('preValidation', requireAuth)
  const unanswered = `Unanswered within ORDER_REQUEST_DAYS (now ${requestDays}), a cancellation request is accepted by the system and any other request expires.`

  app.post(
    '/orders/:orderId/requests',
    {
      schema: {
        tags,
        security,
        summary: 'Ask the other party of an order (cancel, more time, a partial refund)',
        description: `\`cancellation\`: either party, while the order is pending, in progress or delivered; accepted, the order is cancelled and what is still in escrow goes back to the buyer. \`extension\`: the seller, while in progress, with \`days\` (1 to 30); accepted, \`dueAt\` moves that many days later. \`partial_refund\`: the seller, while in progress or delivered, with \`amount\` (less than what the order still holds in escrow, 400 on \`amount\` otherwise); accepted, it goes back to the buyer’s wallet at once and completion pays the seller what is left minus the fee on it. A field of another kind is 400 on that field. Anyone else, or another status, is 422 INVALID_TRANSITION; one request is open at a time (422 REQUEST_OPEN). ${unanswered} Any other move of the order ends an open request as \`expired\`. Both parties are e-mailed each outcome. ${VISIBILITY}`,
        params: IdParams('orderId'),
        body: OpenRequestBody,
        response: responses({ 201: Envelope(OrderRequest) }, 400, 401, 404, ordersErrors.INVALID_TRANSITION, requestErrors.REQUEST_OPEN),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await orders.openRequest(actorOf(request), request.params.orderId, request.body))),
  )

  const answers = [
    { verb: 'accept', run: orders.acceptRequest, summary: 'Accept a request (the other party)', what: 'Applies it in the same transaction (the order cancelled and refunded, its due date moved, or the partial refund paid) and' },
    { verb: 'decline', run: orders.declineRequest, summary: 'Decline a request (the other party)', what: 'Nothing else changes;' },
    { verb: 'withdraw', run: orders.withdrawRequest, summary: 'Withdraw your request (its author)', what: 'Nothing else changes;' },
  ] as const
  for (const { verb, run, summary, what } of answers) {
    app.post(
      `/orders/:orderId/requests/:requestId/${verb}`,
      {
        schema: {
          tags,
          security,
          summary,
          description: `While the request is open (422 INVALID_TRANSITION otherwise, or for the wrong party). ${what} answers the order with its \`requests\`. Of an accept and a decline at the same moment, one wins and the other is 422. ${VISIBILITY}`,
          params: RequestParams,
          body: RequestMoveBody,
          response: responses({ 200: Envelope(Order) }, 400, 401, 404, ordersErrors.INVALID_TRANSITION),
        },
      },
      async (request) => ok(await run(actorOf(request), request.params.orderId, request.params.requestId)),
    )
  }
}
