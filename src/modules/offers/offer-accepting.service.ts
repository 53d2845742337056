import type { Actor } from '../../access/access.ts'
import type { OrdersApi } from '../orders/orders.module.ts'
import { announce, moveOffer, recordNews, type OfferDeps } from './offer-rules.ts'
import { offerServiceUnavailable } from './offers.errors.ts'
import { createOffersRepository } from './offers.repository.ts'

/**
 * Accepting an offer: `POST /offers/{offerId}/accept` (the recipient). Under the offer's row lock,
 * one transaction places the order for the offer's terms (its price into the buyer's escrow, as
 * for any order) and marks the offer accepted with the order's id; so two accepts at once, or an
 * accept racing a withdraw, place at most one order, and 422 INSUFFICIENT_FUNDS moves nothing.
 */
export function createOfferAccepting(deps: OfferDeps & { orders: Pick<OrdersApi, 'offerPlacement' | 'getOrder'> }) {
  const { outbox, orders } = deps
  return {
    async acceptOffer(actor: Actor, offerId: string) {
      const accepted = await moveOffer(deps, actor, offerId, { party: 'recipient', verb: 'accept', past: 'accepted' }, async (tx, row, now) => {
        const order = await orders.offerPlacement.placeFromOffer(tx, {
          offerId: row.id,
          buyerId: row.recipientId,
          sellerId: row.senderId,
          serviceId: row.serviceId,
          title: row.title,
          description: row.description,
          priceCents: row.priceCents,
          deliveryDays: row.deliveryDays,
          revisions: row.revisions,
        })
        if (!order) throw offerServiceUnavailable()
        const accepted = await createOffersRepository(tx).update(row.id, { status: 'accepted', orderId: order.id, respondedAt: now, updatedAt: now })
        await recordNews(outbox, tx, accepted, 'accepted', now)
        return accepted
      })
      await announce(deps, accepted)
      return orders.getOrder(actor, accepted.orderId!)
    },
  }
}
