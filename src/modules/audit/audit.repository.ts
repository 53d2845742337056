import { and, count, desc, eq, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { auditLog, type AuditRow, type NewAuditRow } from './audit.table.ts'

export interface AuditFilter {
  actorId?: string
  targetId?: string
  targetType?: string
  action?: string
}

/** Inserts and reads only: the table is append-only. */
export function createAuditRepository(db: Executor) {
  return {
    async insert(row: NewAuditRow): Promise<AuditRow> {
      const [inserted] = await db.insert(auditLog).values(row).returning()
      return inserted!
    },

    /** Newest first; each filter has an index that starts with its column. */
    async list(filter: AuditFilter, offset: number, limit: number): Promise<{ rows: AuditRow[]; total: number }> {
      const conditions: SQL[] = []
      if (filter.actorId) conditions.push(eq(auditLog.actorId, filter.actorId))
      if (filter.targetId) conditions.push(eq(auditLog.targetId, filter.targetId))
      if (filter.targetType) conditions.push(eq(auditLog.targetType, filter.targetType))
      if (filter.action) conditions.push(eq(auditLog.action, filter.action))
      const where = conditions.length > 0 ? and(...conditions) : undefined
      const [rows, [counted]] = await Promise.all([
        db.select().from(auditLog).where(where).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(auditLog).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },
  }
}
