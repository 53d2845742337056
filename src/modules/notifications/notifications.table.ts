import { sql } from 'drizzle-orm'
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'

/**
 * What a person should hear of (docs/notifications.md). Rows are written in the transaction of the
 * change they tell of: by the trigger on the outbox's `event` jobs (`notifications-from-events.sql`)
 * or by `notify` (a message to someone away). `data` is what the title and body are rendered from
 * (the event's data); `read_at` is null until the person marks it read. The worker deletes rows
 * older than NOTIFICATION_RETENTION_DAYS.
 */
export const notifications = pgTable(
  'notifications',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    linkType: text('link_type').notNull(),
    linkId: uuid('link_id').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    readAt: timestamp('read_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    // A person's list, newest first, and its cursor.
    index('notifications_user_created_idx').on(table.userId, table.createdAt.desc(), table.id.desc()),
    // The unread list and the unread count of `GET /users/me`.
    index('notifications_user_unread_idx')
      .on(table.userId, table.createdAt.desc(), table.id.desc())
      .where(sql`${table.readAt} is null`),
    // The retention sweep: the oldest first.
    index('notifications_created_idx').on(table.createdAt),
  ],
)

export type NotificationRow = typeof notifications.$inferSelect

/**
 * A person's e-mail choices per notification kind: only the kinds they changed, so a kind whose
 * default changes reaches everyone who never chose.
 */
export const notificationSettings = pgTable('notification_settings', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  email: jsonb('email').$type<Record<string, boolean>>().notNull().default({}),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
})
