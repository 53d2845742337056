import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { withForm } from '../../http/multipart.ts'
import { kycErrors } from './kyc.errors.ts'
import { DocumentsForm, KycStatusView, PersonalDetailsBody } from './kyc.schemas.ts'
import type { KycService } from './kyc.service.ts'

const tags = ['kyc']
const security = [{ bearerAuth: [] }]

/** `/seller/kyc`: a seller's own identity verification. */
export const kycRoutes: FastifyPluginAsyncTypebox<{ kyc: KycService; tmpDir: string }> = async (app, { kyc, tmpDir }) => {
  app.post(
    '/seller/kyc/step1',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'KYC step 1: personal details',
        description: 'Opens a submission (or corrects the one waiting for documents). Refused (422 `INVALID_TRANSITION`) while a submission is under review or once verified.',
        body: PersonalDetailsBody,
        response: responses({ 200: Envelope(KycStatusView) }, 400, 401, kycErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await kyc.submitPersonalDetails(actorOf(request), request.body)),
  )

  app.post(
    '/seller/kyc/step2',
    {
      preValidation: requireAuth,
      config: { rateLimitBucket: 'uploads' },
      schema: {
        tags,
        security,
        summary: 'KYC step 2: identity documents',
        description:
          'multipart/form-data: `documentType` (`passport`, `id_card` or `driving_license`), `documentFront` and `selfie` always, `documentBack` except for a passport; each a JPEG, PNG, WebP, GIF or PDF of at most 10 MB. The files are never public. Before step 1: 422 `INVALID_TRANSITION`.',
        ...DocumentsForm.schema,
        response: responses({ 200: Envelope(KycStatusView) }, 400, 401, 415, kycErrors.INVALID_TRANSITION),
      },
    },
    async (request) =>
      ok(
        await withForm(request, DocumentsForm, tmpDir, (form) => kyc.submitDocuments(actorOf(request), form)),
      ),
  )

  app.get(
    '/seller/kyc/status',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'The caller’s KYC status',
        description: '`due` lists what is still to send. Documents come with signed links that expire.',
        response: responses({ 200: Envelope(KycStatusView) }, 401),
      },
    },
    async (request) => ok(await kyc.getStatus(actorOf(request))),
  )
}
