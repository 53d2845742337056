import { Type, type Static } from '@sinclair/typebox'
import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { kycDecisionEmail } from './kyc-emails.ts'
import type { KycViews } from './kyc-views.ts'
import { kycInvalidTransition } from './kyc.errors.ts'
import { kycEvents } from './kyc.events.ts'
import { createKycRepository } from './kyc.repository.ts'
import type { KycStatus } from './kyc.table.ts'

export const KYC_MAIL_JOB = defineJob('mail.kyc_decision', Type.Object({ submissionId: Type.String() }))
type KycMailJob = Static<typeof KYC_MAIL_JOB.payload>

export interface ReviewDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  users: Pick<UsersService, 'updateAccount' | 'findAccountById'>
  audit: Pick<AuditService, 'record'>
  views: Pick<KycViews, 'staffViews'>
  notifications: Pick<NotificationsService, 'emailWanted'>
}

/** The staff side: the review queue and the decision, which sets `isKYCVerified` on approval. */
export function createKycReview(deps: ReviewDeps) {
  const { db, clock, outbox, mailer, users, audit, views, notifications } = deps

  /** Approves or rejects a submission awaiting review, with its e-mail, event and audit row, once. */
  function decide(actor: Actor, submissionId: string, approved: boolean, reason: string | null) {
    return db.transaction(async (tx) => {
      const kyc = createKycRepository(tx)
      const row = await kyc.lockById(submissionId)
      if (!row) throw notFound('KYC submission')
      if (row.status !== 'pending_review') throw kycInvalidTransition(`A submission that is ${row.status.replace('_', ' ')} cannot be ${approved ? 'approved' : 'rejected'}`)
      const now = clock.now()
      const status = approved ? 'approved' : 'rejected'
      const updated = await kyc.update(row.id, { status, rejectionReason: reason, reviewedAt: now, reviewedBy: actor.id, updatedAt: now })
      if (approved) await users.updateAccount(tx, row.userId, { isKycVerified: true })
      await outbox.add(tx, KYC_MAIL_JOB, { submissionId: row.id })
      await emitEvent(outbox, tx, approved ? kycEvents.kycApproved : kycEvents.kycRejected, { submissionId: row.id, userId: row.userId }, now)
      await audit.record(tx, {
        action: approved ? 'kyc.approve' : 'kyc.reject',
        actor,
        targetType: 'kyc_submission',
        targetId: row.id,
        reason,
        before: { status: row.status, userId: row.userId },
        after: { status, ...(approved && { isKYCVerified: true }) },
      })
      return (await views.staffViews(tx, [updated]))[0]!
    })
  }

  return {
    /** `GET /admin/kyc?status=&userId=` (view_kyc): oldest first, with personal details and signed document links. */
    async listSubmissions(filter: { status?: KycStatus; userId?: string }, page: PageRequest) {
      const { rows, total } = await createKycRepository(db).list(filter, offsetOf(page), page.limit)
      return toPage(await views.staffViews(db, rows), total, page)
    },

    /** `GET /admin/kyc/{id}` (view_kyc). */
    async getSubmission(submissionId: string) {
      const row = await createKycRepository(db).findById(submissionId)
      if (!row) throw notFound('KYC submission')
      return (await views.staffViews(db, [row]))[0]!
    },

    /** `POST /admin/kyc/{id}/approve` (manage_kyc): sets the user's `isKYCVerified`. */
    approveSubmission: (actor: Actor, submissionId: string) => decide(actor, submissionId, true, null),

    /** `POST /admin/kyc/{id}/reject` (manage_kyc): the reason is shown to the user. */
    rejectSubmission: (actor: Actor, submissionId: string, reason: string) => decide(actor, submissionId, false, reason.trim()),

    /** The worker's half of a decision: the e-mail to the user, unless they switched these e-mails off. */
    async sendDecisionEmail(job: KycMailJob): Promise<void> {
      const row = await createKycRepository(db).findById(job.submissionId)
      if (!row || (row.status !== 'approved' && row.status !== 'rejected')) return
      const user = await users.findAccountById(db, row.userId)
      if (!user) return
      const approved = row.status === 'approved'
      if (!(await notifications.emailWanted(db, user.id, approved ? 'kyc.approved' : 'kyc.rejected'))) return
      await mailer.send(kycDecisionEmail(user, { approved, reason: row.rejectionReason }))
    },
  }
}
