import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { idempotencyErrors } from '../../platform/idempotency/idempotency.ts'
import { messagingErrors, Offer } from '../messaging/messaging.module.ts'
import { Order } from '../orders/orders.module.ts'
import { walletErrors } from '../wallet/wallet.module.ts'
import { offersErrors } from './offers.errors.ts'
import { CreateOfferBody, DeclineOfferBody, EmptyBody, OffersQuery } from './offers.schemas.ts'
import type { OffersService } from './offers.service.ts'

const tags = ['offers']
const security = [{ bearerAuth: [] }]
const OfferParams = IdParams('offerId')
const VISIBILITY = 'Only the offer’s two parties see it: anyone else gets 404.'
const PENDING = 'A move on an offer that is no longer pending, or by the other party, is 422 INVALID_TRANSITION; after `expiresAt` it is 422 OFFER_EXPIRED and the offer reads `expired`.'

type App = Parameters<FastifyPluginAsyncTypebox>[0]

export const offersRoutes: FastifyPluginAsyncTypebox<{ offers: OffersService }> = async (app, { offers }) => {
  app.addHook('preValidation', requireAuth)

  makingRoutes(app, offers)
  pendingMoveRoutes(app, offers)
}

/** Making an offer in a conversation, and the caller's offers. */
function makingRoutes(app: App, offers: OffersService) {
  app.post(
    '/messages/conversations/:conversationId/offers',
    {
      schema: {
        tags,
        security,
        summary: 'Make a custom offer in a conversation',
        description:
          'To the other participant of a direct conversation of yours (404 for a conversation that is not yours; an order’s conversation is 422 NOT_DIRECT_CONVERSATION). A `serviceId` must be one of your services (404 otherwise) and active (422 OFFER_SERVICE_UNAVAILABLE). The offer appears in the conversation as a message carrying `offer`, pushed to both sides’ sockets like any message, and is e-mailed to the recipient. It is pending for `expiresInDays`.',
        params: IdParams('conversationId'),
        body: CreateOfferBody,
        response: responses({ 201: Envelope(Offer) }, 400, 401, 404, offersErrors.NOT_DIRECT_CONVERSATION, offersErrors.OFFER_SERVICE_UNAVAILABLE, messagingErrors.RECIPIENT_UNAVAILABLE),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await offers.createOffer(actorOf(request), request.params.conversationId, request.body))),
  )

  app.get(
    '/offers',
    {
      schema: {
        tags,
        security,
        summary: "The caller's custom offers",
        description: 'Newest first; `role` (`sent` or `received`, both when absent) and `status` narrow the list.',
        querystring: OffersQuery,
        response: responses({ 200: Envelope(Page(Offer)) }, 400, 401),
      },
    },
    async (request) => ok(await offers.listOffers(actorOf(request), request.query)),
  )
}

/** The moves on a pending offer: the recipient accepts or declines it, the sender withdraws it. */
function pendingMoveRoutes(app: App, offers: OffersService) {
  app.post(
    '/offers/:offerId/accept',
    {
      config: { idempotent: true },
      schema: {
        tags,
        security,
        summary: 'Accept a custom offer (recipient)',
        description: `Places an order for the offer’s terms in one transaction: the price moves from your available balance into escrow (422 INSUFFICIENT_FUNDS otherwise, and nothing moves), the order starts \`in_progress\`, due \`deliveryDays\` from now, and the offer becomes \`accepted\` with its \`orderId\`. Answers the order. Send an \`Idempotency-Key\` header to make a retry safe. ${PENDING} ${VISIBILITY}`,
        params: OfferParams,
        body: EmptyBody,
        response: responses(
          { 201: Envelope(Order) },
          400,
          401,
          404,
          idempotencyErrors.IDEMPOTENCY_KEY_IN_USE,
          idempotencyErrors.IDEMPOTENCY_KEY_REUSED,
          offersErrors.INVALID_TRANSITION,
          offersErrors.OFFER_EXPIRED,
          offersErrors.OFFER_SERVICE_UNAVAILABLE,
          walletErrors.INSUFFICIENT_FUNDS,
        ),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await offers.acceptOffer(actorOf(request), request.params.offerId))),
  )

  app.post(
    '/offers/:offerId/decline',
    {
      schema: {
        tags,
        security,
        summary: 'Decline a custom offer (recipient)',
        description: `With an optional \`reason\` the seller reads. ${PENDING} ${VISIBILITY}`,
        params: OfferParams,
        body: DeclineOfferBody,
        response: responses({ 200: Envelope(Offer) }, 400, 401, 404, offersErrors.INVALID_TRANSITION, offersErrors.OFFER_EXPIRED),
      },
    },
    async (request) => ok(await offers.declineOffer(actorOf(request), request.params.offerId, request.body.reason)),
  )

  app.post(
    '/offers/:offerId/withdraw',
    {
      schema: {
        tags,
        security,
        summary: 'Withdraw a custom offer (sender)',
        description: `While it is pending. ${PENDING} ${VISIBILITY}`,
        params: OfferParams,
        body: EmptyBody,
        response: responses({ 200: Envelope(Offer) }, 400, 401, 404, offersErrors.INVALID_TRANSITION, offersErrors.OFFER_EXPIRED),
      },
    },
    async (request) => ok(await offers.withdrawOffer(actorOf(request), request.params.offerId)),
  )
}