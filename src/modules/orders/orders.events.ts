import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'
import { orderStatuses, requestTypes } from './order-status.ts'

const Uuid = Type.String({ format: 'uuid' })
const Status = Type.Union(orderStatuses.map((status) => Type.Literal(status)))
// serviceId is null for an order from a custom offer that named no service.
const OrderData = Type.Object({ orderId: Uuid, serviceId: Type.Union([Uuid, Type.Null()]), buyerId: Uuid, sellerId: Uuid })
// A request's events: the order's ids, the request's, and an extension's days or a partial refund's amount.
const RequestData = Type.Object({
  ...OrderData.properties,
  requestId: Uuid,
  type: Type.Union(requestTypes.map((type) => Type.Literal(type))),
  requestedBy: Type.Union([Type.Literal('buyer'), Type.Literal('seller')]),
  days: Type.Optional(Type.Integer({ description: 'An extension’s days.' })),
  amount: Type.Optional(Type.Number({ description: 'A partial refund’s amount.' })),
})

/** Events this module emits, each written to the outbox in the transaction of the change. */
export const ordersEvents = {
  orderCreated: defineEvent('order.created', 'A buyer placed an order; its total is in escrow.', Type.Object({ ...OrderData.properties, total: Type.Number() })),
  orderStatusChanged: defineEvent(
    'order.status_changed',
    'An order moved from one status to another (every move, besides the more specific event).',
    Type.Object({ ...OrderData.properties, from: Status, to: Status, by: Type.Union([Uuid, Type.Literal('system')]) }),
  ),
  orderDelivered: defineEvent('order.delivered', 'The seller delivered (or redelivered) an order.', Type.Object({ ...OrderData.properties, deliveryId: Uuid })),
  orderCompleted: defineEvent(
    'order.completed',
    'An order completed: the seller was paid what was left in escrow (the total, less partial refunds accepted before) minus the platform fee on it; `sellerEarning` and `platformFee` are what moved.',
    Type.Object({ ...OrderData.properties, total: Type.Number(), platformFee: Type.Number(), sellerEarning: Type.Number(), automatic: Type.Boolean() }),
  ),
  orderCancelled: defineEvent('order.cancelled', 'An order was cancelled: what it still held in escrow went back to the buyer (its `total`, less partial refunds accepted before).', Type.Object({ ...OrderData.properties, total: Type.Number() })),
  orderTipped: defineEvent(
    'order.tipped',
    'The buyer tipped the seller of a completed order: the tip minus TIP_FEE_PERCENT went to the seller.',
    Type.Object({ ...OrderData.properties, amount: Type.Number(), fee: Type.Number(), sellerEarning: Type.Number() }),
  ),
  orderResolved: defineEvent(
    'order.resolved',
    'Staff settled a dispute by splitting the escrow: `refundAmount` went back to the buyer, `sellerAmount` to the seller and `fee` to the platform; `status` is completed when the seller got anything, cancelled otherwise.',
    Type.Object({
      ...OrderData.properties,
      status: Type.Union([Type.Literal('completed'), Type.Literal('cancelled')]),
      refundAmount: Type.Number(),
      sellerAmount: Type.Number(),
      fee: Type.Number(),
      by: Uuid,
    }),
  ),
  orderDisputed: defineEvent('order.disputed', 'A party opened a dispute; staff with resolve_disputes decide it.', Type.Object({ ...OrderData.properties, reason: Type.String() })),
  orderRequestOpened: defineEvent(
    'order.request_opened',
    'A party of an order asked the other for a cancellation or more time, or the seller offered a partial refund; the other party accepts or declines it within ORDER_REQUEST_DAYS.',
    RequestData,
  ),
  orderRequestAccepted: defineEvent(
    'order.request_accepted',
    'A request was accepted and applied: by the other party, or by the system for a cancellation nobody answered within ORDER_REQUEST_DAYS (then `order.status_changed` says `by: system`).',
    RequestData,
  ),
  orderRequestDeclined: defineEvent('order.request_declined', 'The other party declined a request; nothing changed.', RequestData),
  orderRequestWithdrawn: defineEvent('order.request_withdrawn', 'The party who made a request withdrew it before it was answered.', RequestData),
  orderRequestExpired: defineEvent(
    'order.request_expired',
    'A request ended unanswered: ORDER_REQUEST_DAYS passed (a cancellation is accepted instead), or another move of the order (a delivery, a dispute, a completion, a cancellation) ended it.',
    RequestData,
  ),
  orderRefunded: defineEvent(
    'order.refunded',
    'Staff refunded part of a completed order: `amount` went back from the seller’s earnings still clearing to the buyer’s available balance. The note stays in the audit log and the e-mails to both parties.',
    Type.Object({ ...OrderData.properties, amount: Type.Number(), by: Uuid }),
  ),
}
