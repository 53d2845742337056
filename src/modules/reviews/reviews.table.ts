import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { services } from '../catalogue/services.table.ts'
import { orders } from '../orders/orders.table.ts'
import { users } from '../users/users.table.ts'

const oneToFive = (column: string) => sql.raw(`"${column}" between 1 and 5`)
const nullOrOneToFive = (column: string) => sql.raw(`"${column}" is null or "${column}" between 1 and 5`)

/** Who wrote a review: the order's buyer (rating the seller and the service) or its seller (rating the buyer). */
export const reviewAuthorRoles = ['buyer', 'seller'] as const
export type ReviewAuthorRole = (typeof reviewAuthorRoles)[number]

/**
 * The reviews of completed orders: one by the buyer and one by the seller at most, each with one
 * reply by the party it reviews. Both stay hidden until both are written or the review window has
 * passed since the order completed; `published_at` says when that happened.
 */
export const reviews = pgTable(
  'reviews',
  {
    id: uuid('id').primaryKey(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'restrict' }),
    /** Null for an order from a custom offer that named no service. */
    serviceId: uuid('service_id').references(() => services.id, { onDelete: 'restrict' }),
    /** The order's seller, whoever wrote the review. */
    sellerId: uuid('seller_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    /** The author. */
    reviewerId: uuid('reviewer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    /** Reviews written before sellers could review were all the buyer's. */
    authorRole: text('author_role', { enum: reviewAuthorRoles }).notNull().default('buyer'),
    /** The party reviewed: the seller for the buyer's review, the buyer for the seller's. */
    subjectId: uuid('subject_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    rating: integer('rating').notNull(),
    communication: integer('communication'),
    quality: integer('quality'),
    delivery: integer('delivery'),
    comment: text('comment').notNull().default(''),
    reply: text('reply'),
    repliedAt: timestamp('replied_at', { withTimezone: true, mode: 'date' }),
    /** When the order completed: the review window runs from then. */
    orderCompletedAt: timestamp('order_completed_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** When the review became public; null while it is hidden. */
    publishedAt: timestamp('published_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    uniqueIndex('reviews_order_author_role_unique').on(table.orderId, table.authorRole),
    // A service's public reviews, newest first.
    index('reviews_service_published_idx')
      .on(table.serviceId, table.publishedAt)
      .where(sql`${table.publishedAt} is not null and ${table.authorRole} = 'buyer'`),
    // A user's public reviews as seller or as buyer, newest first, and a seller's recent ratings.
    index('reviews_subject_published_idx')
      .on(table.subjectId, table.authorRole, table.publishedAt)
      .where(sql`${table.publishedAt} is not null`),
    // The worker's query: hidden reviews whose window has passed.
    index('reviews_hidden_idx')
      .on(table.orderCompletedAt)
      .where(sql`${table.publishedAt} is null`),
    index('reviews_seller_idx').on(table.sellerId),
    check('reviews_author_role', sql`${table.authorRole} in ('buyer', 'seller')`),
    // Criteria rate a seller's work: a seller's review of a buyer has none.
    check('reviews_criteria_by_buyer', sql`${table.authorRole} = 'buyer' or (${table.communication} is null and ${table.quality} is null and ${table.delivery} is null)`),
    check('reviews_rating_range', oneToFive('rating')),
    check('reviews_communication_range', nullOrOneToFive('communication')),
    check('reviews_quality_range', nullOrOneToFive('quality')),
    check('reviews_delivery_range', nullOrOneToFive('delivery')),
  ],
)

/**
 * A seller's ratings, kept in the transaction that makes each buyer's review public: how many,
 * their sum (the average is sum / count) and how many of each value, so profiles never aggregate
 * the reviews table.
 */
export const sellerRatings = pgTable('seller_ratings', {
  sellerId: uuid('seller_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'restrict' }),
  reviewsCount: integer('reviews_count').notNull().default(0),
  ratingSum: integer('rating_sum').notNull().default(0),
  ones: integer('ones').notNull().default(0),
  twos: integer('twos').notNull().default(0),
  threes: integer('threes').notNull().default(0),
  fours: integer('fours').notNull().default(0),
  fives: integer('fives').notNull().default(0),
})

/** A buyer's ratings as sellers gave them when their reviews became public: how many and their sum (the average is sum / count). */
export const buyerRatings = pgTable('buyer_ratings', {
  buyerId: uuid('buyer_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'restrict' }),
  reviewsCount: integer('reviews_count').notNull().default(0),
  ratingSum: integer('rating_sum').notNull().default(0),
})

export type ReviewRow = typeof reviews.$inferSelect
export type SellerRatingsRow = typeof sellerRatings.$inferSelect
