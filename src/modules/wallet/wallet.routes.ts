import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { idempotencyErrors } from '../../platform/idempotency/idempotency.ts'
import { walletErrors } from './wallet.errors.ts'
import { Deposit, DepositBody, StatementQuery, Wallet, WalletTransaction } from './wallet.schemas.ts'
import type { WalletService } from './wallet.service.ts'

const tags = ['wallet']
const security = [{ bearerAuth: [] }]

export const walletRoutes: FastifyPluginAsyncTypebox<{ wallet: WalletService }> = async (app, { wallet }) => {
  app.addHook('preValidation', requireAuth)

  app.get('/wallet', { schema: { tags, security, summary: "The caller's balances", response: responses({ 200: Envelope(Wallet) }, 401) } }, async (request) =>
    ok(await wallet.getWallet(actorOf(request))),
  )

  app.get(
    '/wallet/transactions',
    {
      schema: {
        tags,
        security,
        summary: "The caller's statement",
        description:
          'Movements of the available and clearing balances, newest first (default 20 per page, at most 100); `account` keeps one of them. A seller’s earning first shows as a `clearing` line with `availableAt`; when it clears, a `clearance` pair follows (out of `clearing`, into `available`), and a staff refund of it shows as an `earning_reversal` out of `clearing`. With CLEARANCE_DAYS set to 0, earnings are `available` lines at once.',
        querystring: StatementQuery,
        response: responses({ 200: Envelope(Page(WalletTransaction)) }, 400, 401),
      },
    },
    async (request) => ok(await wallet.listTransactions(actorOf(request), request.query)),
  )

  app.post(
    '/wallet/deposits',
    {
      config: { idempotent: true },
      schema: {
        tags,
        security,
        summary: 'Add money to the wallet',
        description: 'Collected by the payments provider and credited to the available balance once it succeeded. Send an `Idempotency-Key` header to make a retry safe.',
        body: DepositBody,
        response: responses({ 201: Envelope(Deposit) }, 400, 401, idempotencyErrors.IDEMPOTENCY_KEY_IN_USE, idempotencyErrors.IDEMPOTENCY_KEY_REUSED, walletErrors.DEPOSITS_UNAVAILABLE),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await wallet.deposit(actorOf(request), request.body.amount))),
  )
}
