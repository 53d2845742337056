import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, primaryKey, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core'
import { uploads } from '../uploads/uploads.table.ts'
import { users } from '../users/users.table.ts'

/**
 * A conversation between two users (decision 0050): direct (one per pair of users, keyed by
 * `direct_key`, the two ids in order) or an order's (keyed by `order_id`; no foreign key, the
 * orders module calls in). `last_seq` numbers its messages 1, 2, 3... with no gaps, so a page of
 * messages is a range of numbers whatever its depth (decision 0051).
 */
export const conversations = pgTable(
  'conversations',
  {
    id: uuid('id').primaryKey(),
    directKey: text('direct_key').unique(),
    orderId: uuid('order_id').unique(),
    lastSeq: integer('last_seq').notNull().default(0),
    lastMessageAt: timestamp('last_message_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [check('conversations_one_kind', sql`(${table.directKey} is null) <> (${table.orderId} is null)`)],
)

/**
 * One row per participant: what they have read (`last_read_seq`), how many messages from the
 * other wait for them (`unread_count`, kept in step under the row lock), when the conversation
 * last moved (`activity_at`, for their list, newest first) and when they were last e-mailed
 * about it.
 */
export const conversationParticipants = pgTable(
  'conversation_participants',
  {
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    lastReadSeq: integer('last_read_seq').notNull().default(0),
    unreadCount: integer('unread_count').notNull().default(0),
    activityAt: timestamp('activity_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastEmailedAt: timestamp('last_emailed_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [
    primaryKey({ columns: [table.conversationId, table.userId] }),
    index('conversation_participants_user_activity_idx').on(table.userId, table.activityAt, table.conversationId),
    check('conversation_participants_unread_non_negative', sql`${table.unreadCount} >= 0`),
  ],
)

export const messages = pgTable(
  'messages',
  {
    id: uuid('id').primaryKey(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    senderId: uuid('sender_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    content: text('content').notNull(),
    attachmentId: uuid('attachment_id').references(() => uploads.id, { onDelete: 'set null' }),
    /** The custom offer this message presents (the offers module keys it; no foreign key, it calls in). */
    offerId: uuid('offer_id'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [unique('messages_conversation_seq_unique').on(table.conversationId, table.seq), check('messages_seq_positive', sql`${table.seq} > 0`)],
)

export type ConversationRow = typeof conversations.$inferSelect
export type ParticipantRow = typeof conversationParticipants.$inferSelect
export type MessageRow = typeof messages.$inferSelect
