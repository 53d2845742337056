import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, Page, PageQuery, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth, requirePermission } from '../../http/auth-hooks.ts'
import type { PayoutsService } from './payouts.service.ts'
import { idempotencyErrors } from '../../platform/idempotency/idempotency.ts'
import { walletErrors } from './wallet.errors.ts'
import { Payout, payoutBody, StaffPayout, PayoutParams, RejectPayoutBody, StaffPayoutsQuery } from './wallet.schemas.ts'

const tags = ['wallet']
const security = [{ bearerAuth: [] }]

export const payoutsRoutes: FastifyPluginAsyncTypebox<{ payouts: PayoutsService; minPayout: number }> = async (app, { payouts, minPayout }) => {
  app.post(
    '/wallet/payout',
    {
      preValidation: requireAuth,
      config: { idempotent: true },
      schema: {
        tags,
        security,
        summary: 'Ask for a payout',
        description: 'Needs a verified identity (KYC). The amount leaves the available balance at once and waits in `pendingPayouts` until staff process it. Send an `Idempotency-Key` header to make a retry safe.',
        body: payoutBody(minPayout),
        response: responses({ 201: Envelope(Payout) }, 400, 401, idempotencyErrors.IDEMPOTENCY_KEY_IN_USE, idempotencyErrors.IDEMPOTENCY_KEY_REUSED, walletErrors.KYC_REQUIRED, walletErrors.INSUFFICIENT_FUNDS),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await payouts.requestPayout(actorOf(request), request.body))),
  )

  app.get(
    '/wallet/payouts',
    { preValidation: requireAuth, schema: { tags, security, summary: "The caller's payouts", description: 'Newest first.', querystring: PageQuery, response: responses({ 200: Envelope(Page(Payout)) }, 400, 401) } },
    async (request) => ok(await payouts.listPayouts(actorOf(request), request.query)),
  )

  app.post(
    '/wallet/payouts/:payoutId/cancel',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Cancel a pending payout',
        description: "The money returns to the available balance. Another user's payout is 404.",
        params: PayoutParams,
        response: responses({ 200: Envelope(Payout) }, 401, 404, walletErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await payouts.cancelPayout(actorOf(request), request.params.payoutId)),
  )

  app.get(
    '/admin/payouts',
    {
      preValidation: requirePermission('view_accounts'),
      schema: { tags: ['admin'], security, summary: 'Payouts for staff (view_accounts)', description: 'Oldest first; filter by `status`. Account numbers are masked. Each payout names its requester (`user`).', querystring: StaffPayoutsQuery, response: responses({ 200: Envelope(Page(StaffPayout)) }, 400, 401, 403) },
    },
    async (request) => ok(await payouts.listForStaff(actorOf(request), request.query.status, request.query)),
  )

  app.post(
    '/admin/payouts/:payoutId/approve',
    {
      preValidation: requirePermission('approve_withdrawals'),
      schema: { tags: ['admin'], security, summary: 'Process a pending payout (approve_withdrawals)', description: 'pending -> processed; emits `payout.processed`.', params: PayoutParams, response: responses({ 200: Envelope(Payout) }, 401, 403, 404, walletErrors.INVALID_TRANSITION) },
    },
    async (request) => ok(await payouts.approvePayout(actorOf(request), request.params.payoutId)),
  )

  app.post(
    '/admin/payouts/:payoutId/reject',
    {
      preValidation: requirePermission('approve_withdrawals'),
      schema: {
        tags: ['admin'],
        security,
        summary: 'Reject a pending payout (approve_withdrawals)',
        description: 'pending -> rejected with a reason; the money returns to the available balance; emits `payout.rejected`.',
        params: PayoutParams,
        body: RejectPayoutBody,
        response: responses({ 200: Envelope(Payout) }, 400, 401, 403, 404, walletErrors.INVALID_TRANSITION),
      },
    },
    async (request) => ok(await payouts.rejectPayout(actorOf(request), request.params.payoutId, request.body.reason)),
  )
}
