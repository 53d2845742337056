import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'

const Uuid = Type.String({ format: 'uuid' })

/** Events this module emits, each written to the outbox in the transaction of the change. */
export const reviewsEvents = {
  reviewCreated: defineEvent(
    'review.created',
    'A buyer reviewed a completed order.',
    Type.Object({ reviewId: Uuid, orderId: Uuid, serviceId: Type.Union([Uuid, Type.Null()]), sellerId: Uuid, rating: Type.Integer({ minimum: 1, maximum: 5 }) }),
  ),
}
