import { asc, eq, gt } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { eventLog, type EventLogRow } from './event-log.table.ts'

/**
 * Reads of the event log. Nothing here appends: rows are written by the commit of the event's
 * transaction (`event_log_append`), in cursor order, so paging by cursor never skips a row.
 */
export function createEventLogRepository(db: Executor) {
  return {
    async listAfter(cursor: number, limit: number): Promise<EventLogRow[]> {
      return db.select().from(eventLog).where(gt(eventLog.cursor, cursor)).orderBy(asc(eventLog.cursor)).limit(limit)
    },

    async findById(id: string): Promise<EventLogRow | undefined> {
      const [row] = await db.select().from(eventLog).where(eq(eventLog.id, id))
      return row
    },
  }
}
