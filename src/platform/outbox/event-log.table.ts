import { bigint, jsonb, pgSequence, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'

/** Cursors of the event log, taken at commit under the append lock (decision 0117). */
export const eventLogCursors = pgSequence('event_log_cursor_seq')

/**
 * The ordered log of every event (`GET /admin/events`). A row is appended by the commit of the
 * transaction that wrote the event's outbox job (a deferred trigger on `outbox_jobs`, migration
 * `event_log_append`), so the log holds exactly the events whose changes committed, and `cursor`
 * grows in commit order. Kept whatever happens to the outbox rows.
 */
export const eventLog = pgTable('event_log', {
  /** The event's id: the id of the outbox job that carries it, and the `webhook-id` of its deliveries. */
  id: uuid('id').primaryKey(),
  cursor: bigint('cursor', { mode: 'number' }).notNull().unique(),
  event: text('event').notNull(),
  /** The business time given to `emitEvent`. */
  occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  /** The database's time at the commit that appended it: `appended_at - occurred_at` is how long the change's transaction stayed open. */
  appendedAt: timestamp('appended_at', { withTimezone: true, mode: 'date' }).notNull(),
})

export type EventLogRow = typeof eventLog.$inferSelect
