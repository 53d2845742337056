import { announce, expireOffer, type OfferDeps } from './offer-rules.ts'
import { createOffersRepository } from './offers.repository.ts'

/**
 * The worker's periodic task: marks pending offers whose time has passed as expired, each in its
 * own transaction under its row lock (rows other workers or an answer hold are skipped), so each
 * expires once, with its event and e-mail, and is pushed to both parties' sockets after.
 */
export function createOfferExpiry(deps: OfferDeps) {
  const expireOneDue = () =>
    deps.db.transaction(async (tx) => {
      const [row] = await createOffersRepository(tx).lockDueForExpiry(deps.clock.now(), 1)
      return row ? expireOffer(deps, tx, row) : undefined
    })

  return {
    /** Returns how many offers it marked expired. */
    async expireDueOffers(limit = 100): Promise<number> {
      let expired = 0
      while (expired < limit) {
        const row = await expireOneDue()
        if (!row) break
        await announce(deps, row)
        expired++
      }
      return expired
    },
  }
}
