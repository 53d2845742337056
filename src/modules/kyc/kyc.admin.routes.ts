import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission } from '../../http/auth-hooks.ts'
import { kycErrors } from './kyc.errors.ts'
import { KycSubmission, KycSubmissionParams, RejectKycBody, StaffKycQuery } from './kyc.schemas.ts'
import type { KycService } from './kyc.service.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]

/** `/admin/kyc`: the review queue (view_kyc) and its decisions (manage_kyc). */
export const kycAdminRoutes: FastifyPluginAsyncTypebox<{ kyc: KycService }> = async (app, { kyc }) => {
  app.get(
    '/admin/kyc',
    {
      preValidation: requirePermission('view_kyc'),
      schema: {
        tags,
        security,
        summary: 'KYC submissions (view_kyc)',
        description: "Oldest first; filter by `status` (`pending_review` is the queue) and by `userId` (one person's whole KYC history). Documents come with signed links that expire.",
        querystring: StaffKycQuery,
        response: responses({ 200: Envelope(Page(KycSubmission)) }, 400, 401, 403),
      },
    },
    async (request) => ok(await kyc.listSubmissions({ status: request.query.status, userId: request.query.userId }, request.query)),
  )

  app.get(
    '/admin/kyc/:submissionId',
    {
      preValidation: requirePermission('view_kyc'),
      schema: { tags, security, summary: 'One KYC submission (view_kyc)', params: KycSubmissionParams, response: responses({ 200: Envelope(KycSubmission) }, 401, 403, 404) },
    },
    async (request) => ok(await kyc.getSubmission(request.params.submissionId)),
  )

  app.post(
    '/admin/kyc/:submissionId/approve',
    {
      preValidation: requirePermission('manage_kyc'),
      schema: {
        tags,
        security,
        summary: 'Approve a KYC submission (manage_kyc)',
        description: 'pending_review -> approved; the user becomes `isKYCVerified`, is e-mailed, and `kyc.approved` is emitted. Deciding twice is 422 `INVALID_TRANSITION`.',
        params: KycSubmissionParams,
        response: responses({ 200: Envelope(KycSubmission) }, 401, 403, 404, kycErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await kyc.approveSubmission(actorOf(request), request.params.submissionId)),
  )

  app.post(
    '/admin/kyc/:submissionId/reject',
    {
      preValidation: requirePermission('manage_kyc'),
      schema: {
        tags,
        security,
        summary: 'Reject a KYC submission (manage_kyc)',
        description: 'pending_review -> rejected with a reason the user is e-mailed; `kyc.rejected` is emitted. The user may submit again.',
        params: KycSubmissionParams,
        body: RejectKycBody,
        response: responses({ 200: Envelope(KycSubmission) }, 400, 401, 403, 404, kycErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await kyc.rejectSubmission(actorOf(request), request.params.submissionId, request.body.reason)),
  )
}
