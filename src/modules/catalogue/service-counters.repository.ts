import { and, asc, count, eq, isNull, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { serviceExtras, servicePackages, services, type ServiceRow } from './services.table.ts'

/** Queries for what other modules read and keep up to date on services: offers to order, counters, seller figures. */
export function createServiceCountersRepository(db: Executor) {
  const live = isNull(services.deletedAt)
  return {
    /**
     * A live service under a share lock: concurrent orders go on side by side, while a delete
     * (which takes the row's update lock) waits for them, so it counts the orders they place.
     */
    async shareLockLive(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db
        .select()
        .from(services)
        .where(and(eq(services.id, id), live))
        .for('share')
      return row
    },

    async findLive(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db
        .select()
        .from(services)
        .where(and(eq(services.id, id), live))
      return row
    },

    packagesOf: (serviceId: string) => db.select().from(servicePackages).where(eq(servicePackages.serviceId, serviceId)).orderBy(asc(servicePackages.position)),
    extrasOf: (serviceId: string) => db.select().from(serviceExtras).where(eq(serviceExtras.serviceId, serviceId)).orderBy(asc(serviceExtras.position)),

    async incrementOrders(id: string): Promise<void> {
      await db
        .update(services)
        .set({ ordersCount: sql`${services.ordersCount} + 1` })
        .where(eq(services.id, id))
    },

    /** Folds one rating into the running average; both right-hand sides read the row's old values. */
    async addRating(id: string, rating: number): Promise<void> {
      await db
        .update(services)
        .set({
          ratingAverage: sql`(${services.ratingAverage} * ${services.ratingCount} + ${rating}) / (${services.ratingCount} + 1)`,
          ratingCount: sql`${services.ratingCount} + 1`,
        })
        .where(eq(services.id, id))
    },

    /** A seller's live services: how many, how many active, and the average starting price of the active ones. */
    async sellerFigures(sellerId: string): Promise<{ total: number; active: number; averageActivePriceCents: number }> {
      const [row] = await db
        .select({
          total: count(),
          active: sql<number>`count(*) filter (where ${services.status} = 'active')::int`,
          averageActivePrice: sql<string | null>`avg(${services.startingPriceCents}) filter (where ${services.status} = 'active')`,
        })
        .from(services)
        .where(and(eq(services.sellerId, sellerId), live))
      return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0), averageActivePriceCents: Math.round(Number(row?.averageActivePrice ?? 0)) }
    },
  }
}

