import type { Actor } from '../../access/access.ts'
import type { Executor, Tx } from '../../db/client.ts'
import { notFound } from '../../lib/errors.ts'
import { isVisibleTo } from './service-rules.ts'
import { createServiceCountersRepository, lockOrderableSql, offerSql, pricedChoiceSql } from './service-counters.repository.ts'
import type { ServiceRow } from './services.table.ts'

/** Counts a service's open orders inside the deleting transaction (registered by the orders module). */
export type OpenOrdersCounter = (tx: Tx, serviceId: string) => Promise<number>

/**
 * What other modules read from and keep up to date on services, each in the caller's
 * transaction or statement: the offer an order is placed on, the orders and rating counters shown in lists
 * (so `sortBy=rating` sorts on real data), a seller's figures for profile statistics, and the
 * open-orders check that refuses a delete. The catalogue cannot call the orders module (orders
 * needs the catalogue), so that check is registered here by the orders module.
 */
export function createServiceCounters() {
  let openOrdersCounter: OpenOrdersCounter | undefined

  return {
    /** Called once by the orders module at start. */
    registerOpenOrdersCounter(counter: OpenOrdersCounter): void {
      openOrdersCounter = counter
    },

    /** Open orders of a service, 0 until an orders module registers its counter. */
    countOpenOrders: (tx: Tx, serviceId: string): Promise<number> => openOrdersCounter?.(tx, serviceId) ?? Promise.resolve(0),

    /** For one-statement order placement: the offer (`OfferJson`), the share lock that keeps it orderable, and the chosen package and extras priced. */
    offerSql,
    lockOrderableSql,
    pricedChoiceSql,

    /** A live service `viewer` may see (active, or theirs, or staff with view_services); 404 otherwise. */
    async visibleService(executor: Executor, viewer: Actor | null, serviceId: string): Promise<ServiceRow> {
      const row = await createServiceCountersRepository(executor).findLive(serviceId)
      if (!row || !isVisibleTo(row, viewer)) throw notFound('Service')
      return row
    },

    /** One more completed order on the service (`ordersCount`). */
    recordCompletedOrder: (tx: Tx, serviceId: string): Promise<void> => createServiceCountersRepository(tx).incrementOrders(serviceId),

    /** One more rating in the service's average and count. */
    recordRating: (tx: Tx, serviceId: string, rating: number): Promise<void> => createServiceCountersRepository(tx).addRating(serviceId, rating),

    /** A seller's live services: total, active, and the average starting price (cents) of the active ones. */
    sellerServiceFigures: (executor: Executor, sellerId: string) => createServiceCountersRepository(executor).sellerFigures(sellerId),
  }
}

export type ServiceCounters = ReturnType<typeof createServiceCounters>
