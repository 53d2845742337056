import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'

/**
 * The record of staff actions (decisions 0040, 0116): who did what to which object, why, the
 * state before and after, and the request that did it. Written in the transaction of the action;
 * append-only (a trigger refuses UPDATE, DELETE and TRUNCATE: migration `audit_log_custom`). No
 * foreign keys: the record must outlive and never block what it describes.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: uuid('id').primaryKey(),
    action: text('action').notNull(),
    /** Null for actions the system takes on its own (none yet through the API). */
    actorId: uuid('actor_id'),
    targetType: text('target_type').notNull(),
    targetId: uuid('target_id').notNull(),
    reason: text('reason'),
    before: jsonb('before').$type<Record<string, unknown>>(),
    after: jsonb('after').$type<Record<string, unknown>>(),
    requestId: text('request_id'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    index('audit_log_created_idx').on(table.createdAt, table.id),
    index('audit_log_actor_created_idx').on(table.actorId, table.createdAt),
    index('audit_log_target_created_idx').on(table.targetId, table.createdAt),
    index('audit_log_action_created_idx').on(table.action, table.createdAt),
  ],
)

export type AuditRow = typeof auditLog.$inferSelect
export type NewAuditRow = typeof auditLog.$inferInsert
