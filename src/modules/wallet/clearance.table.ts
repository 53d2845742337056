import { sql } from 'drizzle-orm'
import { bigint, check, index, pgTable, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'
import { ledgerTransactions } from './ledger.table.ts'

/**
 * A seller's earning while it clears (decision 0195): one row per ledger transaction that credited
 * the seller's `clearing` account (an order's earning, a tip, the seller's part of a split
 * resolution). The worker moves what is left of it to `available` once `available_at` has passed,
 * in its own ledger transaction, and sets `settled_at`; a staff refund takes from it before then
 * (`reversed_cents`), and one that takes all of it settles it too. Of a user's rows, those not
 * settled hold exactly the balance of their `clearing` account (the reconciliation check says so).
 */
export const clearances = pgTable(
  'clearances',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    /** The order the earning comes from (the orders module keys it; no foreign key, as on ledger transactions). */
    orderId: uuid('order_id').notNull(),
    /** What was credited. */
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    /** What staff refunds took back of it before it cleared. */
    reversedCents: bigint('reversed_cents', { mode: 'number' }).notNull().default(0),
    availableAt: timestamp('available_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** When it stopped clearing: its rest moved to `available`, or refunds took all of it. */
    settledAt: timestamp('settled_at', { withTimezone: true, mode: 'date' }),
    /** The ledger transaction that credited it to `clearing`. */
    creditTransactionId: uuid('credit_transaction_id')
      .notNull()
      .references(() => ledgerTransactions.id, { onDelete: 'restrict' }),
    /** The `clearance` transaction that moved its rest to `available`; null while clearing, or when refunds took all of it. */
    clearanceTransactionId: uuid('clearance_transaction_id').references(() => ledgerTransactions.id, { onDelete: 'restrict' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    // The worker's query: earnings still clearing whose time has come.
    index('clearances_due_idx')
      .on(table.availableAt)
      .where(sql`${table.settledAt} is null`),
    // A wallet's next clearing time, and the reconciliation of each clearing balance.
    index('clearances_user_open_idx')
      .on(table.userId, table.availableAt)
      .where(sql`${table.settledAt} is null`),
    index('clearances_order_idx').on(table.orderId),
    uniqueIndex('clearances_credit_transaction_idx').on(table.creditTransactionId),
    check('clearances_amount_positive', sql`${table.amountCents} > 0`),
    check('clearances_reversed_within_amount', sql`${table.reversedCents} >= 0 and ${table.reversedCents} <= ${table.amountCents}`),
    check('clearances_cleared_when_settled', sql`${table.clearanceTransactionId} is null or ${table.settledAt} is not null`),
  ],
)

export type ClearanceRow = typeof clearances.$inferSelect
