import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Amount, Envelope, IdParams, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission } from '../../http/auth-hooks.ts'
import { walletErrors } from '../wallet/wallet.module.ts'
import type { OrderStaffRefunds } from './order-staff-refunds.service.ts'
import { ordersErrors } from './orders.errors.ts'
import { Order } from './orders.schemas.ts'

/** Bounds a staff refund before the order is read; what the seller still has clearing from it is the real limit, checked under its lock. */
const STAFF_REFUND_MAX = 1_000_000

export const StaffRefundBody = Type.Object(
  {
    amount: Amount({
      minimum: 0.01,
      maximum: STAFF_REFUND_MAX,
      errorMessage: 'must be a number more than 0, at most what the seller still has clearing from the order, with at most two decimals',
      description: 'More than 0, at most two decimals, and at most what the seller still has clearing from the order (its earning and its tip while they clear); a larger amount is 400 on the field, naming that bound.',
    }),
    note: Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: '\\S',
      errorMessage: 'must be 1 to 1000 characters',
      description: 'Why staff refund; kept in the audit log and e-mailed to both parties.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ amount: 30, note: 'The source files promised by the package never arrived; 30.00 of the seller’s clearing earning goes back to the buyer.' }],
  },
)

export const orderStaffRefundsRoutes: FastifyPluginAsyncTypebox<{ refunds: OrderStaffRefunds }> = async (app, { refunds }) => {
  app.post(
    '/admin/orders/:orderId/refund',
    {
      preValidation: requirePermission('manage_orders'),
      schema: {
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        summary: 'Refund part of a completed order while its earnings clear (manage_orders)',
        description:
          'A completed order whose seller earnings (the completion’s, the tip’s) are still clearing: `amount` goes back from the seller’s clearing balance to the buyer’s available balance (`earning_reversal` and `staff_refund`), the order’s `refunded` grows by it, and the worker later clears only what is left. One transaction under the order’s lock with the audit record, the `order.refunded` event and an e-mail to each party. An order not completed is 422 `INVALID_TRANSITION`; once nothing of it is clearing (all cleared, or CLEARANCE_DAYS is 0), 422 `ALREADY_CLEARED`.',
        params: IdParams('orderId'),
        body: StaffRefundBody,
        response: responses({ 200: Envelope(Order) }, 400, 401, 403, 404, ordersErrors.INVALID_TRANSITION, walletErrors.ALREADY_CLEARED),
      },
    },
    async (request) => ok(await refunds.refundAsStaff(actorOf(request), request.params.orderId, request.body)),
  )
}
