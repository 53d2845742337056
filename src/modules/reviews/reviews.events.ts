import { Type } from '@sinclair/typebox'
import { StringEnum } from '../../http/common.schemas.ts'
import { defineEvent } from '../../platform/outbox/events.ts'
import { sellerLevels } from '../users/users.module.ts'

const Uuid = Type.String({ format: 'uuid' })
const Parties = { reviewId: Uuid, orderId: Uuid, authorId: Uuid, subjectId: Uuid }

/** Events this module emits, each written to the outbox in the transaction of the change. */
export const reviewsEvents = {
  reviewCreated: defineEvent(
    'review.created',
    'A party reviewed a completed order: the buyer the seller (`subjectId` is `sellerId`), or the seller the buyer. The review stays hidden until `review.published`.',
    Type.Object({
      reviewId: Uuid,
      orderId: Uuid,
      serviceId: Type.Union([Uuid, Type.Null()]),
      sellerId: Type.String({ format: 'uuid', description: 'The order’s seller, whoever wrote the review.' }),
      authorId: Uuid,
      subjectId: Uuid,
      rating: Type.Integer({ minimum: 1, maximum: 5 }),
    }),
  ),
  reviewPublished: defineEvent(
    'review.published',
    'A review became public: both parties of the order reviewed it, or REVIEW_WINDOW_DAYS passed since it completed. From now on it counts in the averages.',
    Type.Object(Parties),
  ),
  reviewReplied: defineEvent(
    'review.replied',
    'The party a public review is about replied to it (`subjectId` replied to `authorId`’s review).',
    Type.Object(Parties),
  ),
  sellerLevelChanged: defineEvent(
    'seller.level_changed',
    'The seller level evaluation moved a seller to another level (docs/seller-levels.md).',
    Type.Object({ userId: Uuid, from: StringEnum(sellerLevels), to: StringEnum(sellerLevels) }),
  ),
}
