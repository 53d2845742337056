import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/** Token ids revoked before their natural expiry (logout); rows are useless after expiresAt. */
export const revokedTokens = pgTable(
  'revoked_tokens',
  {
    jti: text('jti').primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [index('revoked_tokens_expires_at_idx').on(table.expiresAt)],
)
