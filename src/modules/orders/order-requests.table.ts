import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'
import { requestStatuses, requestTypes } from './order-status.ts'
import { orders } from './orders.table.ts'

/**
 * A request between the parties of an order (the resolution center, docs/orders.md): a
 * cancellation, an extension of the due date or a partial refund, which the other party accepts
 * or declines. Every change happens under the order's row lock; the partial unique index keeps
 * one open request per order in the database too.
 */
export const orderRequests = pgTable(
  'order_requests',
  {
    id: uuid('id').primaryKey(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    type: text('type', { enum: requestTypes }).notNull(),
    status: text('status', { enum: requestStatuses }).notNull(),
    requestedBy: text('requested_by', { enum: ['buyer', 'seller'] }).notNull(),
    requesterId: uuid('requester_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    reason: text('reason').notNull(),
    /** An extension's days (whole); null for the other kinds. */
    days: integer('days'),
    /** A partial refund's amount; null for the other kinds. */
    amountCents: integer('amount_cents'),
    /** When an unanswered request ends: expired, or accepted by the worker for a cancellation. */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** When it stopped being open (answered, withdrawn, expired). */
    respondedAt: timestamp('responded_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    uniqueIndex('order_requests_one_open_idx')
      .on(table.orderId)
      .where(sql`${table.status} = 'open'`),
    index('order_requests_order_created_idx').on(table.orderId, table.createdAt),
    // The worker's query: open requests whose time has passed.
    index('order_requests_open_expiry_idx')
      .on(table.expiresAt)
      .where(sql`${table.status} = 'open'`),
    check('order_requests_days_for_extensions', sql`(${table.type} = 'extension') = (${table.days} is not null) and (${table.days} is null or ${table.days} between 1 and 30)`),
    check('order_requests_amount_for_partial_refunds', sql`(${table.type} = 'partial_refund') = (${table.amountCents} is not null) and (${table.amountCents} is null or ${table.amountCents} > 0)`),
    check('order_requests_responded_once_closed', sql`(${table.status} = 'open') = (${table.respondedAt} is null)`),
  ],
)

export type OrderRequestRow = typeof orderRequests.$inferSelect
export type NewOrderRequestRow = typeof orderRequests.$inferInsert
