import type { Actor } from '../../access/access.ts'
import { announce, moveOffer, offerAnswer, recordNews, type OfferDeps } from './offer-rules.ts'
import { createOffersRepository } from './offers.repository.ts'

/** Withdrawing an offer: `POST /offers/{offerId}/withdraw` (the sender), while it is pending. */
export function createOfferWithdrawing(deps: OfferDeps) {
  return {
    async withdrawOffer(actor: Actor, offerId: string) {
      const row = await moveOffer(deps, actor, offerId, { party: 'sender', verb: 'withdraw', past: 'withdrawn' }, async (tx, offer, now) => {
        const withdrawn = await createOffersRepository(tx).update(offer.id, { status: 'withdrawn', respondedAt: now, updatedAt: now })
        await recordNews(deps.outbox, tx, withdrawn, 'withdrawn', now)
        return withdrawn
      })
      await announce(deps, row)
      return offerAnswer(row, deps.clock.now())
    },
  }
}
