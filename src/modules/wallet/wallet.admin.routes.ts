import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, IdParams, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission, requireSuperuser } from '../../http/auth-hooks.ts'
import { walletErrors } from './wallet.errors.ts'
import { AdjustmentBody, Wallet } from './wallet.schemas.ts'
import type { WalletService } from './wallet.service.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]
const UserParams = IdParams('userId')
const StaffWallet = Type.Composite([Type.Object({ userId: Type.String({ format: 'uuid' }) }), Wallet])

/** `/admin/wallets/{userId}`: a user's balances for staff, and corrections by a superuser. */
export const walletAdminRoutes: FastifyPluginAsyncTypebox<{ wallet: WalletService }> = async (app, { wallet }) => {
  app.get(
    '/admin/wallets/:userId',
    {
      preValidation: requirePermission('view_accounts'),
      schema: { tags, security, summary: "A user's wallet (view_accounts)", params: UserParams, response: responses({ 200: Envelope(StaffWallet) }, 401, 403, 404) },
    },
    async (request) => ok(await wallet.walletOf(request.params.userId)),
  )

  app.post(
    '/admin/wallets/:userId/adjustments',
    {
      preValidation: requireSuperuser,
      schema: {
        tags,
        security,
        summary: "Correct a user's available balance (superuser)",
        description: 'A signed amount: positive credits, negative debits (never below zero: 422 `INSUFFICIENT_FUNDS`). Booked as an `adjustment` against the platform’s external account, with the reason as its description.',
        params: UserParams,
        body: AdjustmentBody,
        response: responses({ 201: Envelope(StaffWallet) }, 400, 401, 403, 404, walletErrors.INSUFFICIENT_FUNDS),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await wallet.adjust(actorOf(request), request.params.userId, request.body.amount, request.body.reason))),
  )
}
