import { and, asc, count, desc, eq, gte, inArray, isNotNull, isNull, lte, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { buyerRatings, reviews, sellerRatings, type ReviewAuthorRole, type ReviewRow, type SellerRatingsRow } from './reviews.table.ts'

const COLUMN_OF_RATING = { 1: 'ones', 2: 'twos', 3: 'threes', 4: 'fours', 5: 'fives' } as const

export type Rating = keyof typeof COLUMN_OF_RATING

/** How many ratings and their sum: the average is sum / count. */
export interface RatingTotals {
  count: number
  sum: number
}

export function createReviewsRepository(db: Executor) {
  /** Newest public first, with the total. */
  async function publicPage(where: SQL | undefined, offset: number, limit: number): Promise<{ rows: ReviewRow[]; total: number }> {
    const [rows, [counted]] = await Promise.all([
      db.select().from(reviews).where(where).orderBy(desc(reviews.publishedAt), desc(reviews.id)).offset(offset).limit(limit),
      db.select({ total: count() }).from(reviews).where(where),
    ])
    return { rows, total: counted?.total ?? 0 }
  }

  return {
    async insert(row: typeof reviews.$inferInsert): Promise<ReviewRow> {
      const [inserted] = await db.insert(reviews).values(row).returning()
      return inserted!
    },

    /** The order's reviews: the buyer's and the seller's, each when written. */
    findByOrder(orderId: string): Promise<ReviewRow[]> {
      return db.select().from(reviews).where(eq(reviews.orderId, orderId)).orderBy(asc(reviews.createdAt))
    },

    async findById(id: string): Promise<ReviewRow | undefined> {
      const [row] = await db.select().from(reviews).where(eq(reviews.id, id))
      return row
    },

    async lockById(id: string): Promise<ReviewRow | undefined> {
      const [row] = await db.select().from(reviews).where(eq(reviews.id, id)).for('update')
      return row
    },

    async setReply(id: string, reply: string, at: Date): Promise<ReviewRow> {
      const [row] = await db.update(reviews).set({ reply, repliedAt: at }).where(eq(reviews.id, id)).returning()
      return row!
    },

    /** Makes a hidden review public; undefined when it already was (whoever published it first did the rest). */
    async markPublished(id: string, at: Date): Promise<ReviewRow | undefined> {
      const [row] = await db
        .update(reviews)
        .set({ publishedAt: at })
        .where(and(eq(reviews.id, id), isNull(reviews.publishedAt)))
        .returning()
      return row
    },

    /**
     * Hidden reviews of orders completed at or before `completedBy` (their window has passed),
     * locked; rows another worker holds are skipped.
     */
    lockDueHidden(completedBy: Date, limit: number): Promise<ReviewRow[]> {
      return db
        .select()
        .from(reviews)
        .where(and(isNull(reviews.publishedAt), lte(reviews.orderCompletedAt, completedBy)))
        .orderBy(asc(reviews.orderCompletedAt))
        .limit(limit)
        .for('update', { skipLocked: true })
    },

    /** A service's public reviews (the buyers'). */
    listPublicByService: (serviceId: string, offset: number, limit: number) =>
      publicPage(and(eq(reviews.serviceId, serviceId), eq(reviews.authorRole, 'buyer'), isNotNull(reviews.publishedAt)), offset, limit),

    /** The public reviews a user received, as seller (written by buyers) or as buyer (written by sellers). */
    listPublicBySubject: (subjectId: string, writtenBy: ReviewAuthorRole, offset: number, limit: number) =>
      publicPage(and(eq(reviews.subjectId, subjectId), eq(reviews.authorRole, writtenBy), isNotNull(reviews.publishedAt)), offset, limit),

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
