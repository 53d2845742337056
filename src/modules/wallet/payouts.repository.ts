import { and, asc, count, desc, eq, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { payouts, type PayoutRow, type PayoutStatus } from './payouts.table.ts'

export function createPayoutsRepository(db: Executor) {
  return {
    async insert(row: typeof payouts.$inferInsert): Promise<PayoutRow> {
      const [inserted] = await db.insert(payouts).values(row).returning()
      return inserted!
    },

    async lockById(id: string): Promise<PayoutRow | undefined> {
      const [row] = await db.select().from(payouts).where(eq(payouts.id, id)).for('update')
      return row
    },

    async update(id: string, patch: Partial<Pick<PayoutRow, 'status' | 'rejectionReason' | 'decidedBy' | 'decidedAt'>>): Promise<PayoutRow> {
      const [row] = await db.update(payouts).set(patch).where(eq(payouts.id, id)).returning()
      return row!
    },

    async listByUser(userId: string, offset: number, limit: number): Promise<{ rows: PayoutRow[]; total: number }> {
      const where = eq(payouts.userId, userId)
      const [rows, [counted]] = await Promise.all([
        db.select().from(payouts).where(where).orderBy(desc(payouts.createdAt), desc(payouts.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(payouts).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Staff queue: oldest first, so requests are worked in order. */
    async listByStatus(status: PayoutStatus | undefined, offset: number, limit: number): Promise<{ rows: PayoutRow[]; total: number }> {
      const where = status ? eq(payouts.status, status) : undefined
      const [rows, [counted]] = await Promise.all([
        db.select().from(payouts).where(where).orderBy(asc(payouts.createdAt), asc(payouts.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(payouts).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Pending payouts, through `payouts_pending_idx`: only the queue is read, never the decided history. */
    async pendingTotals(): Promise<{ count: number; amountCents: number }> {
      const [row] = await db
        .select({ count: count(), amountCents: sql<number>`coalesce(sum(${payouts.amountCents}), 0)::bigint` })
        .from(payouts)
        .where(eq(payouts.status, 'pending'))
      return { count: row?.count ?? 0, amountCents: Number(row?.amountCents ?? 0) }
    },

    async findOwned(id: string, userId: string): Promise<PayoutRow | undefined> {
      const [row] = await db
        .select()
        .from(payouts)
        .where(and(eq(payouts.id, id), eq(payouts.userId, userId)))
      return row
    },
  }
}
