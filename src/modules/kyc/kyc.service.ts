import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { defineStats } from '../../platform/statistics/statistics.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createKycReview } from './kyc-review.service.ts'
import { createKycSubmission } from './kyc-submission.service.ts'
import { createKycViews } from './kyc-views.ts'
import { createKycRepository } from './kyc.repository.ts'
import { KycStats } from './kyc.schemas.ts'

type KycUploads = Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles' | 'filesOf' | 'urlOf' | 'registerAccessPolicy'>

/**
 * Seller identity verification (decision 0043): step 1 (personal details), step 2 (documents),
 * and the staff decision, which sets `isKYCVerified` on approval; the seller's and the staff's
 * sides each in their own file.
 */
export function createKycService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  users: Pick<UsersService, 'lockAccount' | 'updateAccount' | 'findAccountById' | 'publicSummariesOf'>
  uploads: KycUploads
  audit: Pick<AuditService, 'record'>
  notifications: Pick<NotificationsService, 'emailWanted'>
}) {
  const { db, uploads } = deps

  // The documents' object is the submission: its owner may read them (staff read them with view_kyc).
  uploads.registerAccessPolicy('identity', async (submissionId, actor) => (await createKycRepository(db).findById(submissionId))?.userId === actor.id)

  const views = createKycViews(deps)
  return {
    ...createKycSubmission({ ...deps, views }),
    ...createKycReview({ ...deps, views }),

    /** The kyc section of `GET /admin/stats`: the review queue, counted on its index. */
    statistics: defineStats('kyc', KycStats, async (executor) => ({ pendingReview: await createKycRepository(executor).countByStatus('pending_review') })),
  }
}

export type KycService = ReturnType<typeof createKycService>
