import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission, requireSuperuser } from '../../http/auth-hooks.ts'
import { walletErrors } from './wallet.errors.ts'
import { AdjustmentBody, StatementQuery, Wallet, WalletTransaction } from './wallet.schemas.ts'
import type { WalletService } from './wallet.service.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]
const UserParams = IdParams('userId')
const StaffWallet = Type.Composite([Type.Object({ userId: Type.String({ format: 'uuid' }) }), Wallet])

/** `/admin/wallets/{userId}`: a user's balances and statement for staff, and corrections by a superuser. */
export const walletAdminRoutes: FastifyPluginAsyncTypebox<{ wallet: WalletService }> = async (app, { wallet }) => {
  app.get(
    '/admin/wallets/:userId',
    {
      preValidation: requirePermission('view_accounts'),
      schema: {
        tags,
        security,
        summary: "A user's wallet (view_accounts)",
        description: 'The balances `GET /wallet` shows the user: available, in escrow, clearing (with `nextClearingAt`) and in payouts waiting.',
        params: UserParams,
        response: responses({ 200: Envelope(StaffWallet) }, 401, 403, 404),
      },
    },
    async (request) => ok(await wallet.walletOf(request.params.userId)),
  )

  app.get(
    '/admin/wallets/:userId/transactions',
    {
      preValidation: requirePermission('view_accounts'),
      schema: {
        tags,
        security,
        summary: "A user's statement (view_accounts)",
        description:
          'The lines `GET /wallet/transactions` shows the user, in the same shape and order: movements of the available and clearing balances, newest first (default 20 per page, at most 100); `account` keeps one of them. An earning still clearing carries `availableAt`. An unknown user is 404.',
        params: UserParams,
        querystring: StatementQuery,
        response: responses({ 200: Envelope(Page(WalletTransaction)) }, 400, 401, 403, 404),
      },
    },
    async (request) => ok(await wallet.statementOf(request.params.userId, request.query)),
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
