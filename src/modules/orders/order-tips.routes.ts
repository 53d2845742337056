import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Amount, Envelope, IdParams, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { idempotencyErrors } from '../../platform/idempotency/idempotency.ts'
import { walletErrors } from '../wallet/wallet.module.ts'
import { tipErrors } from './order-tips.errors.ts'
import type { createOrderTips } from './order-tips.service.ts'
import { Order } from './orders.schemas.ts'

export const TipBody = Type.Object(
  {
    amount: Amount({
      minimum: 1,
      maximum: 1000,
      errorMessage: 'must be a number from 1.00 to 1000.00 with at most two decimals',
      description: 'From 1.00 to 1000.00, at most two decimals, in the platform currency; paid from your available balance.',
    }),
  },
  { additionalProperties: false, examples: [{ amount: 15 }, { amount: 7.5 }] },
)

export const orderTipsRoutes: FastifyPluginAsyncTypebox<{ tips: ReturnType<typeof createOrderTips>; tipDays: number }> = async (app, { tips, tipDays }) => {
  app.addHook('preValidation', requireAuth)

  app.post(
    '/orders/:orderId/tip',
    {
      config: { idempotent: true },
      schema: {
        tags: ['orders'],
        security: [{ bearerAuth: [] }],
        summary: 'Tip the seller of a completed order (buyer)',
        description: `Once per order, within TIP_DAYS (now ${tipDays}) of its completion. The tip goes from your available balance to the seller, minus TIP_FEE_PERCENT to the platform; the order's \`tip\` shows it and \`allowedActions\` lists \`tip\` while you may. Send an \`Idempotency-Key\` header to make a retry safe. Only its buyer and seller, and staff with view_orders, see an order: anyone else gets 404.`,
        params: IdParams('orderId'),
        body: TipBody,
        response: responses(
          { 200: Envelope(Order) },
          400,
          401,
          404,
          idempotencyErrors.IDEMPOTENCY_KEY_IN_USE,
          idempotencyErrors.IDEMPOTENCY_KEY_REUSED,
          tipErrors.NOT_TIPPABLE,
          tipErrors.ALREADY_TIPPED,
          tipErrors.TIP_WINDOW_CLOSED,
          walletErrors.INSUFFICIENT_FUNDS,
        ),
      },
    },
    async (request) => ok(await tips.tipOrder(actorOf(request), request.params.orderId, request.body.amount)),
  )
}
