import { sql } from 'drizzle-orm'
import { bigint, check, index, pgTable, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'

export const userAccountKinds = ['available', 'escrow', 'payout_pending', 'clearing'] as const
export const platformAccountKinds = ['revenue', 'external'] as const
export type UserAccountKind = (typeof userAccountKinds)[number]
export type PlatformAccountKind = (typeof platformAccountKinds)[number]
export type AccountKind = UserAccountKind | PlatformAccountKind
/** The accounts a user's statement lists: what they may spend, and what they earned that is still clearing. */
export const statementAccountKinds = ['available', 'clearing'] as const satisfies readonly UserAccountKind[]
export type StatementAccountKind = (typeof statementAccountKinds)[number]

export const ledgerTransactionTypes = [
  'deposit',
  'order_payment',
  'order_refund',
  'order_earning',
  'payout',
  'payout_reversal',
  'adjustment',
  'tip',
  'tip_earning',
  'order_partial_refund',
  'clearance',
  'earning_reversal',
  'staff_refund',
] as const
export type LedgerTransactionType = (typeof ledgerTransactionTypes)[number]

/**
 * A ledger account (decision 0021). Each user has `available`, `escrow`, `payout_pending` and
 * `clearing` (earnings waiting CLEARANCE_DAYS before they become available, decision 0195); the
 * platform has `revenue` and `external` (where money enters and leaves, so it runs negative).
 * `balance_cents` changes only together with the entries that explain it, and the database
 * refuses a negative balance on a user's account. Each platform account is split into
 * sub-accounts (`sub_account` 0, 1, ...), one chosen per transaction, so that concurrent deposits
 * and completions do not queue on one row (docs/decisions/0186); its balance is their sum.
 */
export const ledgerAccounts = pgTable(
  'ledger_accounts',
  {
    id: uuid('id').primaryKey(),
    ownerId: uuid('owner_id').references(() => users.id, { onDelete: 'restrict' }),
    kind: text('kind', { enum: [...userAccountKinds, ...platformAccountKinds] }).notNull(),
    /** Which part of a platform account this row is; always 0 for a user's account. */
    subAccount: smallint('sub_account').notNull().default(0),
    balanceCents: bigint('balance_cents', { mode: 'number' }).notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    uniqueIndex('ledger_accounts_owner_kind_idx').on(table.ownerId, table.kind),
    uniqueIndex('ledger_accounts_platform_kind_sub_account_idx')
      .on(table.kind, table.subAccount)
      .where(sql`${table.ownerId} is null`),
    check('ledger_accounts_sub_account_platform_only', sql`${table.subAccount} >= 0 and (${table.ownerId} is null or ${table.subAccount} = 0)`),
    check('ledger_accounts_user_balance_not_negative', sql`${table.ownerId} is null or ${table.balanceCents} >= 0`),
    check('ledger_accounts_owner_matches_kind', sql`(${table.ownerId} is null) = (${table.kind} in ('revenue', 'external'))`),
  ],
)

/** One money movement: its entries sum to zero. */
export const ledgerTransactions = pgTable(
  'ledger_transactions',
  {
    id: uuid('id').primaryKey(),
    type: text('type', { enum: ledgerTransactionTypes }).notNull(),
    description: text('description').notNull(),
    orderId: uuid('order_id'),
    payoutId: uuid('payout_id'),
    depositId: uuid('deposit_id'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [index('ledger_transactions_created_idx').on(table.createdAt)],
)

/** Append-only: a trigger refuses UPDATE and DELETE (migration 0009). */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: uuid('id').primaryKey(),
    transactionId: uuid('transaction_id')
      .notNull()
      .references(() => ledgerTransactions.id, { onDelete: 'restrict' }),
    accountId: uuid('account_id')
      .notNull()
      .references(() => ledgerAccounts.id, { onDelete: 'restrict' }),
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    balanceAfterCents: bigint('balance_after_cents', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    // A statement: one account's entries, newest first.
    index('ledger_entries_account_created_idx').on(table.accountId, table.createdAt, table.id),
    index('ledger_entries_transaction_idx').on(table.transactionId),
    check('ledger_entries_amount_not_zero', sql`${table.amountCents} <> 0`),
  ],
)

export type LedgerAccountRow = typeof ledgerAccounts.$inferSelect
export type LedgerEntryRow = typeof ledgerEntries.$inferSelect
