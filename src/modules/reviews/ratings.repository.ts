import { and, eq, gte, inArray, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { buyerRatings, reviews, sellerRatings, type SellerRatingsRow } from './reviews.table.ts'

const COLUMN_OF_RATING = { 1: 'ones', 2: 'twos', 3: 'threes', 4: 'fours', 5: 'fives' } as const

export type Rating = keyof typeof COLUMN_OF_RATING

/** How many ratings and their sum: the average is sum / count. */
export interface RatingTotals {
  count: number
  sum: number
}

/** The running ratings of sellers and buyers (added to when a review becomes public), and sellers' recent ones. */
export function createRatingsRepository(db: Executor) {
  return {
    /** Adds one rating to the seller's running figures (creating them on the first review). */
    async addSellerRating(sellerId: string, rating: Rating): Promise<void> {
      const column = COLUMN_OF_RATING[rating]
      await db
        .insert(sellerRatings)
        .values({ sellerId, reviewsCount: 1, ratingSum: rating, [column]: 1 })
        .onConflictDoUpdate({
          target: sellerRatings.sellerId,
          set: {
            reviewsCount: sql`${sellerRatings.reviewsCount} + 1`,
            ratingSum: sql`${sellerRatings.ratingSum} + ${rating}`,
            [column]: sql`${sellerRatings[column]} + 1`,
          },
        })
    },

    /** Adds one rating to the buyer's running figures (creating them on the first review). */
    async addBuyerRating(buyerId: string, rating: Rating): Promise<void> {
      await db
        .insert(buyerRatings)
        .values({ buyerId, reviewsCount: 1, ratingSum: rating })
        .onConflictDoUpdate({ target: buyerRatings.buyerId, set: { reviewsCount: sql`${buyerRatings.reviewsCount} + 1`, ratingSum: sql`${buyerRatings.ratingSum} + ${rating}` } })
    },

    async sellerRatingsOf(sellerId: string): Promise<SellerRatingsRow | undefined> {
      const [row] = await db.select().from(sellerRatings).where(eq(sellerRatings.sellerId, sellerId))
      return row
    },

    async buyerRatingsOf(buyerId: string): Promise<RatingTotals> {
      const [row] = await db.select().from(buyerRatings).where(eq(buyerRatings.buyerId, buyerId))
      return { count: row?.reviewsCount ?? 0, sum: row?.ratingSum ?? 0 }
    },

    /** Several sellers' lifetime ratings (sellers without any are absent). */
    async sellerTotalsOf(sellerIds: string[]): Promise<Map<string, RatingTotals>> {
      if (sellerIds.length === 0) return new Map()
      const rows = await db.select().from(sellerRatings).where(inArray(sellerRatings.sellerId, sellerIds))
      return new Map(rows.map((row) => [row.sellerId, { count: row.reviewsCount, sum: row.ratingSum }]))
    },

    /** Several sellers' ratings from buyers' reviews made public since `since`, grouped (sellers without any are absent). */
    async recentSellerTotalsOf(sellerIds: string[], since: Date): Promise<Map<string, RatingTotals>> {
      if (sellerIds.length === 0) return new Map()
      const rows = await db
        .select({ sellerId: reviews.subjectId, count: sql<number>`count(*)::int`, sum: sql<number>`sum(${reviews.rating})::int` })
        .from(reviews)
        .where(and(inArray(reviews.subjectId, sellerIds), eq(reviews.authorRole, 'buyer'), gte(reviews.publishedAt, since)))
        .groupBy(reviews.subjectId)
      return new Map(rows.map((row) => [row.sellerId, { count: row.count, sum: row.sum }]))
    },
  }
}
