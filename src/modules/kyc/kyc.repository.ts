import { and, asc, count, desc, eq } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { kycSubmissions, type KycStatus, type KycSubmissionRow, type NewKycSubmissionRow } from './kyc.table.ts'

export function createKycRepository(db: Executor) {
  return {
    async insert(row: NewKycSubmissionRow): Promise<KycSubmissionRow> {
      const [inserted] = await db.insert(kycSubmissions).values(row).returning()
      return inserted!
    },

    async update(id: string, patch: Partial<Omit<NewKycSubmissionRow, 'id' | 'userId' | 'createdAt'>>): Promise<KycSubmissionRow> {
      const [row] = await db.update(kycSubmissions).set(patch).where(eq(kycSubmissions.id, id)).returning()
      return row!
    },

    async findById(id: string): Promise<KycSubmissionRow | undefined> {
      const [row] = await db.select().from(kycSubmissions).where(eq(kycSubmissions.id, id))
      return row
    },

    async lockById(id: string): Promise<KycSubmissionRow | undefined> {
      const [row] = await db.select().from(kycSubmissions).where(eq(kycSubmissions.id, id)).for('update')
      return row
    },

    /** The user's newest submission: their current KYC status. */
    async findLatestByUser(userId: string): Promise<KycSubmissionRow | undefined> {
      const [row] = await db.select().from(kycSubmissions).where(eq(kycSubmissions.userId, userId)).orderBy(desc(kycSubmissions.createdAt), desc(kycSubmissions.id)).limit(1)
      return row
    },

    /** Staff queue: oldest first, so submissions are reviewed in order; optionally one person's history. */
    async list(filter: { status?: KycStatus; userId?: string }, offset: number, limit: number): Promise<{ rows: KycSubmissionRow[]; total: number }> {
      const where = and(filter.status ? eq(kycSubmissions.status, filter.status) : undefined, filter.userId ? eq(kycSubmissions.userId, filter.userId) : undefined)
      const [rows, [counted]] = await Promise.all([
        db.select().from(kycSubmissions).where(where).orderBy(asc(kycSubmissions.createdAt), asc(kycSubmissions.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(kycSubmissions).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    async countByStatus(status: KycStatus): Promise<number> {
      const [row] = await db.select({ total: count() }).from(kycSubmissions).where(and(eq(kycSubmissions.status, status)))
      return row?.total ?? 0
    },
  }
}
