import { asc, gt, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { webhookEvents, type EventRow } from './webhooks.table.ts'

/** Arbitrary constant naming the event log's append lock (pg_advisory_xact_lock). */
const APPEND_LOCK = 7_346_211_013

export function createEventLogRepository(db: Executor) {
  return {
    /**
     * Serialises appends until the transaction ends: a cursor is taken and committed before the
     * next append takes one, so a reader never sees cursor N+1 while N is still to commit.
     */
    async lockAppends(): Promise<void> {
      await db.execute(sql`select pg_advisory_xact_lock(${APPEND_LOCK})`)
    },

    /** Appends an event; undefined when it is already there (its job ran twice). */
    async append(row: Omit<typeof webhookEvents.$inferInsert, 'cursor'>): Promise<EventRow | undefined> {
      const [inserted] = await db.insert(webhookEvents).values(row).onConflictDoNothing({ target: webhookEvents.id }).returning()
      return inserted
    },

    async listAfter(cursor: number, limit: number): Promise<EventRow[]> {
      return db.select().from(webhookEvents).where(gt(webhookEvents.cursor, cursor)).orderBy(asc(webhookEvents.cursor)).limit(limit)
    },
  }
}
