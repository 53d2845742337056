import type { Actor } from '../../access/access.ts'
import type { Executor } from '../../db/client.ts'
import { offsetOf, toPage } from '../../http/pagination.ts'
import type { Offer } from '../messaging/messaging.module.ts'
import { offerAnswer, type OfferDeps } from './offer-rules.ts'
import { createOffersRepository } from './offers.repository.ts'
import type { OffersQuery } from './offers.schemas.ts'

/** Reading offers: `GET /offers`, and the offers that messages present. */
export function createOfferReading(deps: OfferDeps) {
  const { db, clock } = deps
  return {
    /** `GET /offers`: the caller's offers, sent, received or both, newest first. */
    async listOffers(actor: Actor, query: OffersQuery) {
      const now = clock.now()
      const { rows, total } = await createOffersRepository(db).list({ userId: actor.id, role: query.role, status: query.status }, now, offsetOf(query), query.limit)
      return toPage(
        rows.map((row) => offerAnswer(row, now)),
        total,
        query,
      )
    },

    /** For the messaging module: the offers of these ids, by id (one query). */
    offersByIds: async (executor: Executor, ids: string[]): Promise<Map<string, Offer>> => {
      const now = clock.now()
      return new Map((await createOffersRepository(executor).findByIds(ids)).map((row) => [row.id, offerAnswer(row, now)]))
    },
  }
}
