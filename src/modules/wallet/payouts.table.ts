import { sql } from 'drizzle-orm'
import { bigint, check, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'

export const payoutStatuses = ['pending', 'processed', 'rejected', 'cancelled'] as const
export type PayoutStatus = (typeof payoutStatuses)[number]

export const payoutMethods = ['bank_transfer', 'paypal'] as const
export type PayoutMethod = (typeof payoutMethods)[number]

/**
 * A withdrawal request (decision 0022). Its amount sits in the user's
 * `payout_pending` account from the request until staff process it (money leaves) or it is
 * rejected or cancelled (money returns to `available`).
 */
export const payouts = pgTable(
  'payouts',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    method: text('method', { enum: payoutMethods }).notNull(),
    details: jsonb('details').$type<Record<string, string>>().notNull(),
    status: text('status', { enum: payoutStatuses }).notNull(),
    rejectionReason: text('rejection_reason'),
    decidedBy: uuid('decided_by').references(() => users.id, { onDelete: 'restrict' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [
    index('payouts_user_created_idx').on(table.userId, table.createdAt),
    index('payouts_status_created_idx').on(table.status, table.createdAt),
    // The admin statistics' pending count and amount, without visiting decided payouts.
    index('payouts_pending_idx')
      .on(table.createdAt)
      .where(sql`${table.status} = 'pending'`),
    check('payouts_amount_positive', sql`${table.amountCents} > 0`),
  ],
)

export type PayoutRow = typeof payouts.$inferSelect
