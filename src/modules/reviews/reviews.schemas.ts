import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, PageQuery, StringEnum, Timestamp } from '../../http/common.schemas.ts'
import { SellerLevel, UserSummary } from '../users/users.module.ts'
import { reviewAuthorRoles } from './reviews.table.ts'

const Score = (description: string) => Type.Integer({ minimum: 1, maximum: 5, errorMessage: 'must be an integer from 1 to 5', description })

export const CreateReviewBody = Type.Object(
  {
    orderId: Type.String({ format: 'uuid', errorMessage: 'must be the id of an order' }),
    rating: Score('Overall, 1 to 5.'),
    comment: Type.Optional(Type.String({ maxLength: 2000, errorMessage: 'must be at most 2000 characters', description: 'At most 2,000 characters.' })),
    criteria: Type.Optional(
      Type.Object(
        { communication: Score('1 to 5.'), quality: Score('1 to 5.'), delivery: Score('1 to 5.') },
        { additionalProperties: false, description: 'The buyer’s review only (from the seller: 400 on `criteria`); optional, and when sent all three scores.' },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'The buyer rates the seller and the service (with optional `criteria`); the seller rates the buyer with `rating` and `comment` only.',
    examples: [
      {
        orderId: '0196b576-4b4e-7eba-998b-6c91910e2ad5',
        rating: 5,
        comment: 'María understood our roastery at once. Three strong concepts, quick revisions and files ready for print.',
        criteria: { communication: 5, quality: 5, delivery: 4 },
      },
      {
        orderId: '0196b576-4b4e-7eba-998b-6c91910e2ad5',
        rating: 5,
        comment: 'Clear brief, quick answers and prompt feedback on every draft. A pleasure to work with.',
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

export const UserReviewsQuery = Type.Object(
  {
    role: Type.Optional(
      StringEnum(['seller', 'buyer'] as const, { description: '`seller` (default): the reviews buyers gave the user as seller; `buyer`: the reviews sellers gave the user as buyer.' }),
    ),
    page: PageQuery.properties.page,
    limit: ServiceReviewsQuery.properties.limit,
  },
  { additionalProperties: false },
)

const AuthorRole = StringEnum(reviewAuthorRoles, { description: '`buyer`: the buyer reviewed the seller (and the service); `seller`: the seller reviewed the buyer.' })
const reviewer = { ...UserSummary, description: 'The author’s public fields.' }
const subject = { ...UserSummary, description: 'The public fields of the party reviewed.' }

export const Review = Type.Object(
  {
    id: Id,
    orderId: Id,
    serviceId: Nullable(Type.String({ ...Id, description: 'The order’s service; null for an order from a custom offer that named none (the review counts for the seller).' })),
    authorRole: AuthorRole,
    status: StringEnum(['published', 'hidden'] as const, { description: '`hidden` until both parties have reviewed the order or REVIEW_WINDOW_DAYS have passed since it completed: then only its author sees it whole.' }),
    rating: Type.Integer(),
    criteria: Nullable(Type.Object({ communication: Type.Integer(), quality: Type.Integer(), delivery: Type.Integer() }, { description: 'The buyer’s scores of the seller’s work, when given; always null on a seller’s review.' })),
    comment: Type.String(),
    reviewer,
    subject,
    reply: Nullable(Type.Object({ text: Type.String(), createdAt: Timestamp }, { description: 'The reviewed party’s one answer.' })),
    createdAt: Timestamp,
    publishedAt: Nullable(Type.String({ ...Timestamp, description: 'When it became public; null while hidden.' })),
  },
  { description: 'A review of a completed order, as its author sees it, or anyone once it is public.' },
)

export const HiddenReview = Type.Object(
  {
    id: Id,
    orderId: Id,
    authorRole: AuthorRole,
    status: StringEnum(['hidden'] as const),
    reviewer,
    subject,
    createdAt: Timestamp,
  },
  { description: 'A review the other party wrote about the caller, not public yet: that it exists, never its rating or words.' },
)

/** A review as a caller may see it: whole, or only that it exists. */
export const ReviewAsSeen = Type.Union([Review, HiddenReview])

export const OrderReviews = Type.Object(
  {
    buyerReview: Nullable(ReviewAsSeen),
    sellerReview: Nullable(ReviewAsSeen),
    windowClosesAt: Nullable(Type.String({ ...Timestamp, description: 'Until when the order may be reviewed (its completion plus REVIEW_WINDOW_DAYS); null while it is not completed.' })),
    canReview: Type.Boolean({ description: 'Whether the caller may review the order now.' }),
  },
  { description: 'The reviews of an order as one of its parties sees them.' },
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
    onTimeDeliveryRate: Type.Number({
      description: 'Orders first delivered on or before their due time over orders delivered, x 100, two decimals; 0 when none was delivered. An order in dispute counts in neither until staff resolve it.',
    }),
    totalReviews: Type.Integer({ description: 'Public reviews buyers gave the user as seller.' }),
    averageRating: Rating,
    ratingDistribution: Type.Object({ 5: Type.Integer(), 4: Type.Integer(), 3: Type.Integer(), 2: Type.Integer(), 1: Type.Integer() }),
    memberSince: Timestamp,
    lastLogin: Nullable(Timestamp),
    isKYCVerified: Type.Boolean(),
    sellerLevel: SellerLevel,
    levelEvaluatedAt: Nullable(Type.String({ ...Timestamp, description: 'When the seller level was last evaluated; null before the first evaluation.' })),
  },
  { description: 'The extended statistics of a user as a seller.' },
)
