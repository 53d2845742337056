import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, PageQuery, Timestamp } from '../../http/common.schemas.ts'
import { UserSummary } from '../users/users.module.ts'

const Score = (description: string) => Type.Integer({ minimum: 1, maximum: 5, errorMessage: 'must be an integer from 1 to 5', description })

export const CreateReviewBody = Type.Object(
  {
    orderId: Type.String({ format: 'uuid', errorMessage: 'must be the id of an order' }),
    rating: Score('Overall, 1 to 5.'),
    comment: Type.Optional(Type.String({ maxLength: 2000, errorMessage: 'must be at most 2000 characters', description: 'At most 2,000 characters.' })),
    criteria: Type.Optional(
      Type.Object(
        { communication: Score('1 to 5.'), quality: Score('1 to 5.'), delivery: Score('1 to 5.') },
        { additionalProperties: false, description: 'Optional; when sent, all three scores.' },
      ),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        orderId: '0196b576-4b4e-7eba-998b-6c91910e2ad5',
        rating: 5,
        comment: 'María understood our roastery at once. Three strong concepts, quick revisions and files ready for print.',
        criteria: { communication: 5, quality: 5, delivery: 4 },
      },
    ],
  },
)
export type CreateReviewBody = Static<typeof CreateReviewBody>

export const ReplyBody = Type.Object(
  { reply: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', errorMessage: 'must be 1 to 1000 characters', description: 'The seller’s public answer, once.' }) },
  { additionalProperties: false, examples: [{ reply: 'Thank you! It was a pleasure to work on Tostadero Azul. Enjoy the new bags.' }] },
)

export const ServiceReviewsQuery = Type.Object(
  {
    page: PageQuery.properties.page,
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Items per page: 10 by default, at most 100.' }),
  },
  { additionalProperties: false },
)

export const Review = Type.Object(
  {
    id: Id,
    orderId: Id,
    serviceId: Nullable(Type.String({ ...Id, description: 'The service reviewed; null for an order from a custom offer that named none (the review counts for the seller).' })),
    rating: Type.Integer(),
    criteria: Nullable(Type.Object({ communication: Type.Integer(), quality: Type.Integer(), delivery: Type.Integer() })),
    comment: Type.String(),
    reviewer: { ...UserSummary, description: 'The buyer’s public fields.' },
    reply: Nullable(Type.Object({ text: Type.String(), createdAt: Timestamp })),
    createdAt: Timestamp,
  },
  { description: 'A buyer’s review of a completed order.' },
)

const Rating = Type.Number({ description: 'Average rating, two decimals; 0 without reviews.' })

export const UserStats = Type.Object(
  {
    totalServices: Type.Integer({ description: 'Services that are not deleted, in any status.' }),
    activeServices: Type.Integer(),
    averageServicePrice: Type.Number({ description: 'Average starting price of the active services; 0 without any.' }),
    totalOrders: Type.Integer({ description: 'Orders received as seller, in any status.' }),
    completedOrders: Type.Integer(),
    completionRate: Type.Number({ description: 'completed / (completed + cancelled) x 100, two decimals; 0 when no order has ended.' }),
    totalReviews: Type.Integer(),
    averageRating: Rating,
    ratingDistribution: Type.Object({ 5: Type.Integer(), 4: Type.Integer(), 3: Type.Integer(), 2: Type.Integer(), 1: Type.Integer() }),
    memberSince: Timestamp,
    lastLogin: Nullable(Timestamp),
    isKYCVerified: Type.Boolean(),
  },
  { description: 'The extended statistics of a user as a seller.' },
)
