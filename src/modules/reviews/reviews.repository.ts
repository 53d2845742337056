import { count, desc, eq, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { reviews, sellerRatings, type ReviewRow, type SellerRatingsRow } from './reviews.table.ts'

const COLUMN_OF_RATING = { 1: 'ones', 2: 'twos', 3: 'threes', 4: 'fours', 5: 'fives' } as const

export function createReviewsRepository(db: Executor) {
  return {
    async insert(row: typeof reviews.$inferInsert): Promise<ReviewRow> {
      const [inserted] = await db.insert(reviews).values(row).returning()
      return inserted!
    },

    async findByOrder(orderId: string): Promise<ReviewRow | undefined> {
      const [row] = await db.select().from(reviews).where(eq(reviews.orderId, orderId))
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

    /** Newest first. */
    async listByService(serviceId: string, offset: number, limit: number): Promise<{ rows: ReviewRow[]; total: number }> {
      const where = eq(reviews.serviceId, serviceId)
      const [rows, [counted]] = await Promise.all([
        db.select().from(reviews).where(where).orderBy(desc(reviews.createdAt), desc(reviews.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(reviews).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Adds one rating to the seller's running figures (creating them on the first review). */
    async addSellerRating(sellerId: string, rating: 1 | 2 | 3 | 4 | 5): Promise<void> {
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

    async sellerRatingsOf(sellerId: string): Promise<SellerRatingsRow | undefined> {
      const [row] = await db.select().from(sellerRatings).where(eq(sellerRatings.sellerId, sellerId))
      return row
    },
  }
}
