import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'
import { orderStatuses } from './order-status.ts'

const Uuid = Type.String({ format: 'uuid' })
const Status = Type.Union(orderStatuses.map((status) => Type.Literal(status)))
// serviceId is null for an order from a custom offer that named no service.
const OrderData = Type.Object({ orderId: Uuid, serviceId: Type.Union([Uuid, Type.Null()]), buyerId: Uuid, sellerId: Uuid })

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
    'An order completed: the seller was paid its total minus the platform fee.',
    Type.Object({ ...OrderData.properties, total: Type.Number(), platformFee: Type.Number(), sellerEarning: Type.Number(), automatic: Type.Boolean() }),
  ),
  orderCancelled: defineEvent('order.cancelled', 'An order was cancelled: its total went back to the buyer.', Type.Object({ ...OrderData.properties, total: Type.Number() })),
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
  orderRefunded: defineEvent(
    'order.refunded',
    'Staff refunded part of a completed order: `amount` went back from the seller’s earnings still clearing to the buyer’s available balance. The note stays in the audit log and the e-mails to both parties.',
    Type.Object({ ...OrderData.properties, amount: Type.Number(), by: Uuid }),
  ),
}
