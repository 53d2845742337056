import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, primaryKey, text, timestamp, uuid, varchar } from 'drizzle-orm/pg-core'

export const idempotencyKeyStates = ['in_progress', 'completed'] as const
export type IdempotencyKeyState = (typeof idempotencyKeyStates)[number]

/**
 * One row per (user, Idempotency-Key) seen in the last 24 hours (decision 0020): `in_progress` while the
 * first request runs, then `completed` with the answer it got, which later requests replay.
 * `user_id` has no foreign key: platform/ knows no module's tables, and a row outlives nothing
 * longer than its 24 h (the sweep removes it).
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    userId: uuid('user_id').notNull(),
    key: varchar('key', { length: 255 }).notNull(),
    /** SHA-256 (hex) of the method, route, parameters and canonical JSON body of the first request. */
    fingerprint: text('fingerprint').notNull(),
    state: text('state', { enum: idempotencyKeyStates }).notNull(),
    responseStatus: integer('response_status'),
    /** The payload exactly as it was sent, so a replay is byte for byte the same. */
    responseBody: text('response_body'),
    responseContentType: text('response_content_type'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** Past this instant the key counts as never used: a new request overwrites the row. */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.userId, table.key] }),
    index('idempotency_keys_expires_at_idx').on(table.expiresAt),
    check('idempotency_keys_state_known', sql`${table.state} in ('in_progress', 'completed')`),
    check('idempotency_keys_completed_has_answer', sql`${table.state} = 'in_progress' or (${table.responseStatus} is not null and ${table.responseBody} is not null)`),
  ],
)

export type IdempotencyKeyRow = typeof idempotencyKeys.$inferSelect
export type NewIdempotencyKey = typeof idempotencyKeys.$inferInsert
