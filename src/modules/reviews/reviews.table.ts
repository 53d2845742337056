import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { services } from '../catalogue/services.table.ts'
import { orders } from '../orders/orders.table.ts'
import { users } from '../users/users.table.ts'

const oneToFive = (column: string) => sql.raw(`"${column}" between 1 and 5`)
const nullOrOneToFive = (column: string) => sql.raw(`"${column}" is null or "${column}" between 1 and 5`)

/** A buyer's review of a completed order (one per order), and the seller's one reply to it. */
export const reviews = pgTable(
  'reviews',
  {
    id: uuid('id').primaryKey(),
    orderId: uuid('order_id')
      .notNull()
      .unique()
      .references(() => orders.id, { onDelete: 'restrict' }),
    /** Null for an order from a custom offer that named no service. */
    serviceId: uuid('service_id').references(() => services.id, { onDelete: 'restrict' }),
    sellerId: uuid('seller_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    reviewerId: uuid('reviewer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    rating: integer('rating').notNull(),
    communication: integer('communication'),
    quality: integer('quality'),
    delivery: integer('delivery'),
    comment: text('comment').notNull().default(''),
    reply: text('reply'),
    repliedAt: timestamp('replied_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    index('reviews_service_created_idx').on(table.serviceId, table.createdAt),
    index('reviews_seller_idx').on(table.sellerId),
    check('reviews_rating_range', oneToFive('rating')),
    check('reviews_communication_range', nullOrOneToFive('communication')),
    check('reviews_quality_range', nullOrOneToFive('quality')),
    check('reviews_delivery_range', nullOrOneToFive('delivery')),
  ],
)

/**
 * A seller's ratings, kept in the transaction of each review: how many, their sum (the average is
 * sum / count) and how many of each value, so profiles never aggregate the reviews table.
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

export type ReviewRow = typeof reviews.$inferSelect
export type SellerRatingsRow = typeof sellerRatings.$inferSelect
