import { defineErrors, fail, type AppError } from '../../lib/errors.ts'
import type { OfferStatus } from '../messaging/messaging.module.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const offersErrors = defineErrors({
  INVALID_TRANSITION: { status: 422, description: 'The offer is no longer pending (accepted, declined or withdrawn), or the caller is not the party who may make this move.' },
  OFFER_EXPIRED: { status: 422, description: 'The offer’s `expiresAt` has passed: it reads `expired` from then on.' },
  NOT_DIRECT_CONVERSATION: { status: 422, description: 'Custom offers are made in a direct conversation, not in an order’s.' },
  OFFER_SERVICE_UNAVAILABLE: { status: 422, description: 'The service named is not active (paused, pending review, rejected): no offer can be made under it, and an offer made under it cannot be accepted while it is not.' },
})

export const invalidOfferMove = (status: OfferStatus, move: string, hint = ''): AppError =>
  fail(offersErrors.INVALID_TRANSITION, `A ${status} offer cannot be ${move}${hint}`)

export const onlyParty = (party: 'recipient' | 'sender', move: string): AppError => fail(offersErrors.INVALID_TRANSITION, `Only the offer's ${party} may ${move} it`)

export const offerExpired = (): AppError => fail(offersErrors.OFFER_EXPIRED, 'The offer has expired')

export const notDirectConversation = (): AppError => fail(offersErrors.NOT_DIRECT_CONVERSATION, 'Custom offers are made in a direct conversation, not in an order’s conversation')

export const offerServiceUnavailable = (): AppError => fail(offersErrors.OFFER_SERVICE_UNAVAILABLE, 'The service is not active')
