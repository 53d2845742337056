import { bigint, check, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { sql } from 'drizzle-orm'
import { users } from '../users/users.table.ts'

export const depositStatuses = ['pending', 'succeeded', 'failed'] as const
export type DepositStatus = (typeof depositStatuses)[number]

/** Money a user paid in through a payments provider; credited to `available` once it succeeded. */
export const deposits = pgTable(
  'deposits',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    amountCents: bigint('amount_cents', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    provider: text('provider').notNull(),
    providerReference: text('provider_reference'),
    status: text('status', { enum: depositStatuses }).notNull(),
    failureReason: text('failure_reason'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [index('deposits_user_created_idx').on(table.userId, table.createdAt), check('deposits_amount_positive', sql`${table.amountCents} > 0`)],
)

export type DepositRow = typeof deposits.$inferSelect
