import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'

const Uuid = Type.String({ format: 'uuid' })
const OfferData = Type.Object({ offerId: Uuid, conversationId: Uuid, senderId: Uuid, recipientId: Uuid })

/** Events this module emits, each written to the outbox in the transaction of the change. */
export const offersEvents = {
  offerCreated: defineEvent(
    'offer.created',
    'A seller made a custom offer to a buyer in their conversation.',
    Type.Object({ ...OfferData.properties, serviceId: Type.Union([Uuid, Type.Null()]), price: Type.Number(), deliveryDays: Type.Integer(), expiresAt: Type.String() }),
  ),
  offerAccepted: defineEvent('offer.accepted', 'The buyer accepted a custom offer: an order was placed from it, its price in escrow.', Type.Object({ ...OfferData.properties, orderId: Uuid, price: Type.Number() })),
  offerDeclined: defineEvent('offer.declined', 'The buyer declined a custom offer.', Type.Object({ ...OfferData.properties, reason: Type.Union([Type.String(), Type.Null()]) })),
  offerWithdrawn: defineEvent('offer.withdrawn', 'The seller withdrew a pending custom offer.', OfferData),
  offerExpired: defineEvent('offer.expired', 'A custom offer passed its expiry time without an answer.', OfferData),
}
