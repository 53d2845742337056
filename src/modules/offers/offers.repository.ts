import { and, asc, count, desc, eq, gt, inArray, lte, or, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import type { OfferStatus } from '../messaging/messaging.module.ts'
import { offers, type NewOfferRow, type OfferRow } from './offers.table.ts'

export interface OfferFilter {
  userId: string
  role?: 'sent' | 'received'
  status?: OfferStatus
}

export function createOffersRepository(db: Executor) {
  /** A pending offer past its time reads expired before the worker marks it, so the filter decides on both. */
  const statusCondition = (status: OfferStatus, now: Date): SQL | undefined => {
    if (status === 'pending') return and(eq(offers.status, 'pending'), gt(offers.expiresAt, now))
    if (status === 'expired') return or(eq(offers.status, 'expired'), and(eq(offers.status, 'pending'), lte(offers.expiresAt, now)))
    return eq(offers.status, status)
  }

  const whereOf = (filter: OfferFilter, now: Date): SQL | undefined => {
    const party = filter.role === 'sent' ? eq(offers.senderId, filter.userId) : filter.role === 'received' ? eq(offers.recipientId, filter.userId) : or(eq(offers.senderId, filter.userId), eq(offers.recipientId, filter.userId))
    return filter.status ? and(party, statusCondition(filter.status, now)) : party
  }

  return {
    async insert(row: NewOfferRow): Promise<OfferRow> {
      const [inserted] = await db.insert(offers).values(row).returning()
      return inserted!
    },

    async findById(id: string): Promise<OfferRow | undefined> {
      const [row] = await db.select().from(offers).where(eq(offers.id, id))
      return row
    },

    async lockById(id: string): Promise<OfferRow | undefined> {
      const [row] = await db.select().from(offers).where(eq(offers.id, id)).for('update')
      return row
    },

    findByIds(ids: string[]): Promise<OfferRow[]> {
      return ids.length === 0 ? Promise.resolve([]) : db.select().from(offers).where(inArray(offers.id, ids))
    },

    async update(id: string, patch: Partial<Pick<OfferRow, 'status' | 'declineReason' | 'orderId' | 'respondedAt' | 'updatedAt'>>): Promise<OfferRow> {
      const [row] = await db.update(offers).set(patch).where(eq(offers.id, id)).returning()
      return row!
    },

    /** Newest first. */
    async list(filter: OfferFilter, now: Date, offset: number, limit: number): Promise<{ rows: OfferRow[]; total: number }> {
      const where = whereOf(filter, now)
      const [rows, [counted]] = await Promise.all([
        db.select().from(offers).where(where).orderBy(desc(offers.createdAt), desc(offers.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(offers).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Pending offers past their time, locked; rows another worker holds are skipped. */
    lockDueForExpiry(now: Date, limit: number): Promise<OfferRow[]> {
      return db
        .select()
        .from(offers)
        .where(and(eq(offers.status, 'pending'), lte(offers.expiresAt, now)))
        .orderBy(asc(offers.expiresAt))
        .limit(limit)
        .for('update', { skipLocked: true })
    },
  }
}
