import { and, asc, count, desc, eq, isNotNull, isNull, lte, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { reviews, type ReviewAuthorRole, type ReviewRow } from './reviews.table.ts'

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
  }
}
