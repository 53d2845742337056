import { expireOffer, type OfferDeps } from './offer-rules.ts'
import { createOffersRepository } from './offers.repository.ts'

/**
 * The worker's periodic task: marks pending offers whose time has passed as expired, each in its
 * own transaction under its row lock (rows other workers or an answer hold are skipped), so each
 * expires once, with its event and e-mail.
 */
export function createOfferExpiry(deps: OfferDeps) {
  const expireOneDue = () =>
    deps.db.transaction(async (tx) => {
      const [row] = await createOffersRepository(tx).lockDueForExpiry(deps.clock.now(), 1)
      if (!row) return false
      await expireOffer(deps, tx, row)
      return true
    })

  return {
    /** Returns how many offers it marked expired. */
    async expireDueOffers(limit = 100): Promise<number> {
      let expired = 0
      while (expired < limit && (await expireOneDue())) expired++
      return expired
    },
  }
}
