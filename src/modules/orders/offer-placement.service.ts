import { sql } from 'drizzle-orm'
import { rowsOf, type Tx } from '../../db/client.ts'
import { tableRelation } from '../../db/fragments.ts'
import { preparedSql } from '../../db/statements.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { basisPointsOfCents, fromCents } from '../../lib/money.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { MessagingService } from '../messaging/messaging.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { ordersEvents } from './orders.events.ts'
import { createOrdersRepository } from './orders.repository.ts'
import { orders, type OrderRow } from './orders.table.ts'

/** What a custom offer fixed: the order copies it as an ordinary order copies its package. */
export interface OfferTerms {
  offerId: string
  buyerId: string
  sellerId: string
  /** The seller's service the offer was made under, or null. */
  serviceId: string | null
  title: string
  description: string
  priceCents: number
  deliveryDays: number
  revisions: number
}

/** The package name an order from a custom offer carries. */
export const CUSTOM_OFFER_PACKAGE = 'Custom offer'

/**
 * Orders placed from an accepted custom offer (docs/offers.md). The buyer already agreed to the
 * seller's terms, so the order starts `in_progress` and is due `deliveryDays` from now; the money
 * goes into escrow exactly as for an ordinary order, in the caller's transaction.
 */
export function createOfferPlacement(deps: {
  clock: Clock
  outbox: Outbox
  ledger: Pick<LedgerService, 'transfer'>
  catalogue: Pick<CatalogueService, 'lockOrderableSql'>
  messaging: Pick<MessagingService, 'orderConversationCtes' | 'orderConversationValues'>
  platformFeeBasisPoints: number
}) {
  const { clock, outbox, ledger, catalogue, messaging, platformFeeBasisPoints } = deps
  const p = (name: string) => sql.placeholder(name)
  // The order's conversation, opened by the messaging module's own CTEs over the new order.
  const openConversation = preparedSql<Record<string, unknown>, unknown>(
    'orders_offer_conversation',
    sql`with placed as (select ${p('orderId')}::uuid as id, ${p('buyerId')}::uuid as buyer_id, ${p('sellerId')}::uuid as seller_id, ${p('createdAt')}::timestamptz as created_at),
      ${messaging.orderConversationCtes(tableRelation('placed', orders, ['id', 'buyerId', 'sellerId', 'createdAt']))}
      select 1`,
  )

  return {
    /**
     * Places the order in `tx`: the service, when the offer named one, is share-locked while live
     * and active (a delete waits and then counts this order; null when it is gone or not active),
     * the price moves from the buyer's available balance into escrow (422 INSUFFICIENT_FUNDS
     * otherwise, and the caller's transaction rolls back), then the order, its conversation and
     * `order.created` are written.
     */
    async placeFromOffer(tx: Tx, terms: OfferTerms): Promise<OrderRow | null> {
      if (terms.serviceId !== null) {
        const locked = await rowsOf(tx, catalogue.lockOrderableSql(sql`${terms.serviceId}::uuid`).sql)
        if (locked.length === 0) return null
      }
      const id = newId()
      const now = clock.now()
      await ledger.transfer(tx, {
        from: { userId: terms.buyerId, kind: 'available' },
        to: { userId: terms.buyerId, kind: 'escrow' },
        amountCents: terms.priceCents,
        type: 'order_payment',
        description: `Order: ${terms.title}`,
        orderId: id,
      })
      const row = await createOrdersRepository(tx).insert({
        id,
        buyerId: terms.buyerId,
        sellerId: terms.sellerId,
        serviceId: terms.serviceId,
        packageId: null,
        offerId: terms.offerId,
        serviceTitle: terms.title,
        packageName: CUSTOM_OFFER_PACKAGE,
        status: 'in_progress',
        requirements: terms.description,
        priceCents: terms.priceCents,
        extras: [],
        totalCents: terms.priceCents,
        // The fee rounded half-up to the cent, as for every order.
        platformFeeCents: basisPointsOfCents(terms.priceCents, platformFeeBasisPoints),
        deliveryDays: terms.deliveryDays,
        revisionsLeft: terms.revisions,
        timeline: [{ action: 'accept', status: 'in_progress', by: 'buyer', reason: null, at: now.toISOString() }],
        dueAt: new Date(now.getTime() + terms.deliveryDays * DAY),
        createdAt: now,
        updatedAt: now,
      })
      await openConversation(tx, { ...messaging.orderConversationValues(), orderId: id, buyerId: terms.buyerId, sellerId: terms.sellerId, createdAt: now.toISOString() })
      await emitEvent(outbox, tx, ordersEvents.orderCreated, { orderId: id, serviceId: terms.serviceId, buyerId: terms.buyerId, sellerId: terms.sellerId, total: fromCents(terms.priceCents) }, now)
      return row
    },
  }
}

export type OfferPlacement = ReturnType<typeof createOfferPlacement>
