import { defineModule } from '../../platform/module.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { kycAdminRoutes } from './kyc.admin.routes.ts'
import { kycErrors } from './kyc.errors.ts'
import { kycEvents } from './kyc.events.ts'
import { kycRoutes } from './kyc.routes.ts'
import { KYC_MAIL_JOB } from './kyc-review.service.ts'
import { createKycService } from './kyc.service.ts'
import { kycSubmissions } from './kyc.table.ts'

/** Seller identity verification: personal details, private identity documents, staff decisions (which set `isKYCVerified`). */
export const kycModule = defineModule({
  name: 'kyc',
  needs: ['users', 'uploads', 'audit', 'notifications'],
  tables: { kycSubmissions },
  create: ({ db, clock, outbox, mailer }, deps: { users: UsersService; uploads: UploadsService; audit: AuditService; notifications: NotificationsService }) => createKycService({ db, clock, outbox, mailer, ...deps }),
  routes: (api, { config }) => async (app) => {
    await app.register(kycRoutes, { kyc: api, tmpDir: config.tmpDir })
    await app.register(kycAdminRoutes, { kyc: api })
  },
  jobs: (api) => [handleJob(KYC_MAIL_JOB, (payload) => api.sendDecisionEmail(payload))],
  statistics: (api) => api.statistics,
  events: Object.values(kycEvents),
  errors: kycErrors,
})

export type { KycService } from './kyc.service.ts'
