import type { Actor } from '../../access/access.ts'
import { announce, moveOffer, offerAnswer, recordNews, type OfferDeps } from './offer-rules.ts'
import { createOffersRepository } from './offers.repository.ts'

/** Declining an offer: `POST /offers/{offerId}/decline` (the recipient), with an optional reason the seller reads. */
export function createOfferDeclining(deps: OfferDeps) {
  return {
    async declineOffer(actor: Actor, offerId: string, reason: string | undefined) {
      const row = await moveOffer(deps, actor, offerId, { party: 'recipient', verb: 'decline', past: 'declined' }, async (tx, offer, now) => {
        const declined = await createOffersRepository(tx).update(offer.id, { status: 'declined', declineReason: reason?.trim() ?? null, respondedAt: now, updatedAt: now })
        await recordNews(deps.outbox, tx, declined, 'declined', now)
        return declined
      })
      await announce(deps, row)
      return offerAnswer(row, deps.clock.now())
    },
  }
}
