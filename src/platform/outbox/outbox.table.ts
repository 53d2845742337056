import { boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'

export const outboxJobStatuses = ['pending', 'running', 'done', 'dead'] as const
export type OutboxJobStatus = (typeof outboxJobStatuses)[number]

/**
 * Work that must happen after a transaction commits (mail, webhooks). Rows are written in the
 * same transaction as the change that causes them, so a commit never loses its side effects.
 */
export const outboxJobs = pgTable(
  'outbox_jobs',
  {
    id: uuid('id').primaryKey(),
    topic: text('topic').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: outboxJobStatuses }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    runAt: timestamp('run_at', { withTimezone: true, mode: 'date' }).notNull(),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [index('outbox_jobs_due_idx').on(table.status, table.runAt), index('outbox_jobs_topic_idx').on(table.topic, table.createdAt)],
)

export const outboxAttempts = pgTable(
  'outbox_attempts',
  {
    id: uuid('id').primaryKey(),
    jobId: uuid('job_id')
      .notNull()
      .references(() => outboxJobs.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }).notNull(),
    succeeded: boolean('succeeded').notNull(),
    error: text('error'),
  },
  (table) => [index('outbox_attempts_job_id_idx').on(table.jobId)],
)

export type OutboxJobRow = typeof outboxJobs.$inferSelect
