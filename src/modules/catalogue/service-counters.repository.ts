import { and, count, eq, isNull, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { lentRelation } from '../../db/fragments.ts'
import { jsonObjectSql } from '../../db/json-sql.ts'
import { ChosenExtra, Offer } from './services.schemas.ts'
import { serviceExtras, servicePackages, services, type ServiceRow } from './services.table.ts'

/** A live service as an order sees it (`offerSql`); its packages and extras are priced by `pricedChoiceSql`. */
export type OfferJson = Offer

/**
 * For the orders module's one-statement reads: the live service in `serviceId` as JSON built by
 * PostgreSQL; null when it is missing or deleted.
 */
export const offerSql = (serviceId: SQL) =>
  sql<OfferJson | null>`(select ${jsonObjectSql(Offer, { id: sql`s.id`, status: sql`s.status`, sellerId: sql`s.seller_id`, title: sql`s.title` })}
    from ${services} s where s.id = ${serviceId} and s.deleted_at is null)`

/**
 * For the orders module's one-statement placement, the body of a CTE: the service's row while it
 * is live and active, under a share lock. Orders go on side by side, while a delete (which takes
 * the row's update lock and then counts open orders) waits for them, so it counts the orders they
 * place; a placement that waited for a delete or a moderation finds no row.
 */
export const lockOrderableSql = (serviceId: SQL) =>
  lentRelation<{ id: string }>(
    { id: 'id' },
    (as) => sql`select ${services.id} as ${as.id} from ${services} where ${services.id} = ${serviceId} and ${services.status} = 'active' and ${services.deletedAt} is null for share`,
  )

/** A priced choice (`pricedChoiceSql`): the package's columns are null when it is not the service's. */
export interface PricedChoice {
  packageId: string | null
  packageName: string | null
  priceCents: number | null
  revisions: number | null
  totalCents: number | null
  deliveryDays: number | null
  extras: ChosenExtra[]
  /** Positions (from 0) of the asked extras that are not the service's. */
  missing: number[]
}

/**
 * For the orders module's one-statement placement, the body of a CTE of exactly one row: the
 * package `packageId` of service `serviceId` (its columns null when it is not the service's),
 * priced with the extras `extraIds` (a JSON array of ids in any letter case, each counted once per
 * mention): `totalCents` and `deliveryDays` summed over the extras, the extras (`ChosenExtra`, in
 * the order asked), and `missing`, the positions (from 0) of the ids that are not extras of the
 * service. The choice is orderable when `packageId` is not null and `missing` is empty.
 */
export const pricedChoiceSql = (serviceId: SQL, packageId: SQL, extraIds: SQL) =>
  lentRelation<PricedChoice>(
    {
      packageId: 'package_id',
      packageName: 'package_name',
      priceCents: 'price_cents',
      revisions: 'revisions',
      totalCents: 'total_cents',
      deliveryDays: 'delivery_days',
      extras: 'extras',
      missing: 'missing',
    },
    (as) => sql`select p.id as ${as.packageId}, p.name as ${as.packageName}, p.price_cents as ${as.priceCents}, p.revisions as ${as.revisions},
      p.price_cents + x.extras_cents as ${as.totalCents}, p.delivery_days + x.extras_days as ${as.deliveryDays}, x.extras as ${as.extras}, x.missing as ${as.missing}
    from (select 1) as one
    left join ${servicePackages} p on p.id = ${packageId} and p.service_id = ${serviceId}
    cross join lateral (
      select coalesce(sum(e.price_cents), 0)::int as extras_cents, coalesce(sum(e.additional_days), 0)::int as extras_days,
        coalesce(json_agg(${jsonObjectSql(ChosenExtra, { id: sql`e.id`, title: sql`e.title`, priceCents: sql`e.price_cents`, additionalDays: sql`e.additional_days` })} order by asked.n)
          filter (where e.id is not null), '[]'::json) as extras,
        coalesce(json_agg(asked.n - 1 order by asked.n) filter (where e.id is null), '[]'::json) as missing
      from json_array_elements_text(${extraIds}) with ordinality as asked(id, n)
      left join ${serviceExtras} e on e.id::text = lower(asked.id) and e.service_id = ${serviceId}) as x`,
  )

/** Queries for what other modules read and keep up to date on services: offers to order, counters, seller figures. */
export function createServiceCountersRepository(db: Executor) {
  const live = isNull(services.deletedAt)
  return {
    async findLive(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db
        .select()
        .from(services)
        .where(and(eq(services.id, id), live))
      return row
    },

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

