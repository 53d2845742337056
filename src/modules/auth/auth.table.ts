import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'

/** Token ids revoked before their natural expiry (logout); rows are useless after expiresAt. */
export const revokedTokens = pgTable(
  'revoked_tokens',
  {
    jti: text('jti').primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [index('revoked_tokens_expires_at_idx').on(table.expiresAt)],
)

/**
 * One login session (RFC 9700 section 4.14.2): every access and refresh token names its family,
 * and no token outlives the family's expiresAt. Revoking the family refuses all of its tokens.
 * Rows are kept until expiresAt, revoked or not, then purged.
 */
export const tokenFamilies = pgTable(
  'token_families',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [index('token_families_user_id_idx').on(table.userId), index('token_families_expires_at_idx').on(table.expiresAt)],
)

/** Every refresh token issued in a family; usedAt is set when it is exchanged, so a second use is visible. */
export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    jti: uuid('jti').primaryKey(),
    familyId: uuid('family_id')
      .notNull()
      .references(() => tokenFamilies.id, { onDelete: 'cascade' }),
    issuedAt: timestamp('issued_at', { withTimezone: true, mode: 'date' }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [index('refresh_tokens_family_id_idx').on(table.familyId)],
)

export type TokenFamilyRow = typeof tokenFamilies.$inferSelect
export type NewTokenFamilyRow = typeof tokenFamilies.$inferInsert
export type NewRefreshTokenRow = typeof refreshTokens.$inferInsert
