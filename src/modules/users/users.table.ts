import { sql } from 'drizzle-orm'
import { boolean, check, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey(),
    email: text('email').notNull().unique(),
    username: text('username').notNull().unique(),
    fullName: text('full_name').notNull(),
    passwordHash: text('password_hash').notNull(),
    isActive: boolean('is_active').notNull().default(false),
    isStaff: boolean('is_staff').notNull().default(false),
    isSuperuser: boolean('is_superuser').notNull().default(false),
    isKycVerified: boolean('is_kyc_verified').notNull().default(false),
    title: text('title'),
    description: text('description'),
    phone: text('phone'),
    notes: text('notes'),
    /** Bumped by a password reset: every token carrying an older version is refused. */
    tokenVersion: integer('token_version').notNull().default(0),
    /** Set once, by activation (or at creation for staff); an old activation link cannot undo a deactivation. */
    activatedAt: timestamp('activated_at', { withTimezone: true, mode: 'date' }),
    lastLogin: timestamp('last_login', { withTimezone: true, mode: 'date' }),
    /** Set while staff have suspended the account: every token, refresh and login is refused. */
    suspendedAt: timestamp('suspended_at', { withTimezone: true, mode: 'date' }),
    suspensionReason: text('suspension_reason'),
    /** The seller level the worker last computed (docs/seller-levels.md); every seller starts at `new`. */
    sellerLevel: text('seller_level', { enum: ['new', 'level_one', 'level_two', 'top_rated'] }).notNull().default('new'),
    /** When the level was last evaluated; null until the first evaluation. */
    levelEvaluatedAt: timestamp('level_evaluated_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    index('users_created_at_idx').on(table.createdAt),
    // The staff figures and filters of the admin console touch only the (few) rows they count.
    index('users_staff_idx')
      .on(table.createdAt)
      .where(sql`${table.isStaff} or ${table.isSuperuser}`),
    index('users_suspended_idx')
      .on(table.suspendedAt)
      .where(sql`${table.suspendedAt} is not null`),
    // The sellers above `new`, whom a list filtered by levels reads first (decision 0235).
    index('users_seller_level_idx')
      .on(table.sellerLevel)
      .where(sql`${table.sellerLevel} <> 'new'`),
    check('users_seller_level_check', sql`${table.sellerLevel} in ('new', 'level_one', 'level_two', 'top_rated')`),
    index('users_search_trgm_idx').using('gin', sql`(${table.email} || ' ' || ${table.username} || ' ' || ${table.fullName}) gin_trgm_ops`),
  ],
)

export type UserRow = typeof users.$inferSelect
export type NewUserRow = typeof users.$inferInsert
