import { sql } from 'drizzle-orm'
import { date, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { uploads } from '../uploads/uploads.table.ts'
import { users } from '../users/users.table.ts'

export const kycStatuses = ['pending_documents', 'pending_review', 'approved', 'rejected'] as const
export type KycStatus = (typeof kycStatuses)[number]

export const documentTypes = ['passport', 'id_card', 'driving_license'] as const
export type DocumentType = (typeof documentTypes)[number]

/**
 * One identity submission (decision 0043): step 1's personal details, then step 2's documents,
 * then a staff decision. A decided submission is never changed: submitting again after a
 * rejection opens a new row (copying the personal details when the user goes straight to step 2),
 * so every decision stays on record with the documents it was taken on. The personal details are
 * personal data: served only to their owner and to staff with view_kyc, never logged.
 */
export const kycSubmissions = pgTable(
  'kyc_submissions',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    status: text('status', { enum: kycStatuses }).notNull(),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    dateOfBirth: date('date_of_birth', { mode: 'string' }).notNull(),
    /** ISO 3166-1 alpha-2, upper case. */
    country: text('country').notNull(),
    /** E.164, e.g. `+442071838750`. */
    phone: text('phone').notNull(),
    documentType: text('document_type', { enum: documentTypes }),
    documentFrontId: uuid('document_front_id').references(() => uploads.id, { onDelete: 'restrict' }),
    documentBackId: uuid('document_back_id').references(() => uploads.id, { onDelete: 'restrict' }),
    selfieId: uuid('selfie_id').references(() => uploads.id, { onDelete: 'restrict' }),
    submittedAt: timestamp('submitted_at', { withTimezone: true, mode: 'date' }),
    reviewedAt: timestamp('reviewed_at', { withTimezone: true, mode: 'date' }),
    reviewedBy: uuid('reviewed_by').references(() => users.id, { onDelete: 'restrict' }),
    rejectionReason: text('rejection_reason'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    // A user's submissions, newest first: the newest is their current status.
    index('kyc_submissions_user_created_idx').on(table.userId, table.createdAt),
    // The staff queue by status, oldest first; also the `kyc.pending` figure of the statistics.
    index('kyc_submissions_status_created_idx').on(table.status, table.createdAt),
    // At most one submission in progress or approved per user: concurrent step 1s cannot open two.
    uniqueIndex('kyc_submissions_user_open_idx')
      .on(table.userId)
      .where(sql`${table.status} <> 'rejected'`),
  ],
)

export type KycSubmissionRow = typeof kycSubmissions.$inferSelect
export type NewKycSubmissionRow = typeof kycSubmissions.$inferInsert
