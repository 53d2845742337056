import { and, asc, count, desc, eq, inArray, lte, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { preparedSql } from '../../db/statements.ts'
import { eventJobSql } from '../../platform/outbox/events.ts'
import type { OfferJson } from '../catalogue/catalogue.module.ts'
import type { TransferColumns, TransferValues } from '../wallet/wallet.module.ts'
import { openStatuses, type OrderStatus } from './order-status.ts'
import { orderDeliveries, orders, type NewOrderRow, type OrderDeliveryRow, type OrderRow } from './orders.table.ts'

/** A user's public fields as another module's fragment builds them (users.publicSummarySql). */
export interface PartyJson {
  id: string
  fullName: string
  username: string
  avatar: string | null
}

/** What a buyer is about to order, read in one statement before anything is written. */
export interface OfferRead {
  offer: OfferJson | null
  buyer: PartyJson | null
  seller: PartyJson | null
}

/** The fragments of other modules that the order statements are made of. */
export interface PlacementParts {
  transferSql: SQL
  offerSql(serviceId: SQL): SQL<OfferJson | null>
  publicSummarySql(userId: SQL): SQL<PartyJson | null>
  lockOrderableSql(serviceId: SQL): SQL
  orderConversationCtes(placed: string): SQL
}

/** The order's own columns at placement, for `preparePlacement`'s placeholders (money and ids besides the transfer's). */
export type PlacementValues = Omit<NewOrderRow, 'id' | 'status' | 'extras' | 'createdAt' | 'updatedAt' | 'statusReason' | 'dueAt' | 'deliveredAt' | 'autoCompleteAt' | 'completedAt' | 'cancelledAt'> & {
  /** JSON text of the ordered extras. */
  extras: string
}

/** The offer (service, packages, extras) and both parties' public fields, in one round trip. */
export function prepareOfferRead(parts: Pick<PlacementParts, 'offerSql' | 'publicSummarySql'>) {
  const statement = preparedSql<{ serviceId: string; buyerId: string }, OfferRead>(
    'orders_offer',
    sql`select o.offer, ${parts.publicSummarySql(sql`${sql.placeholder('buyerId')}::uuid`)} as buyer, ${parts.publicSummarySql(sql`(o.offer->>'sellerId')::uuid`)} as seller
    from (select ${parts.offerSql(sql`${sql.placeholder('serviceId')}::uuid`)} as offer) o`,
  )
  return async (executor: Executor, serviceId: string, buyerId: string): Promise<OfferRead> => (await statement(executor, { serviceId, buyerId }))[0]!
}

/**
 * Placing an order in one statement, so in one round trip and atomic without BEGIN and COMMIT:
 * the service share-locked while still live and active (the catalogue's fragment), then, only
 * when it is (a one-time filter: the call never runs otherwise), the buyer's transfer into escrow
 * (`ledger_transfer`), then, only when the money moved, the order row, its conversation (the
 * messaging module's CTEs) and its `order.created` event. The transfer's values fill `orderId`
 * and `createdAt`, shared with the order.
 */
export function preparePlacement(parts: Pick<PlacementParts, 'transferSql' | 'lockOrderableSql' | 'orderConversationCtes'>) {
  const placeholder = (name: keyof PlacementValues | 'orderId' | 'createdAt') => sql.placeholder(name)
  const statement = preparedSql<TransferValues & Record<string, unknown>, TransferColumns & { live: boolean }>(
    'orders_place',
    sql`with live as materialized (${parts.lockOrderableSql(sql`${placeholder('serviceId')}::uuid`)}),
    transfer as (select t.accounts_found, t.source_balance, t.moved from ${parts.transferSql} t where exists (select 1 from live)),
    placed as (
      insert into ${orders} (id, buyer_id, seller_id, service_id, package_id, service_title, package_name, status, requirements,
        price_cents, extras, total_cents, platform_fee_cents, delivery_days, revisions_left, created_at, updated_at)
      select ${placeholder('orderId')}::uuid, ${placeholder('buyerId')}::uuid, ${placeholder('sellerId')}::uuid, ${placeholder('serviceId')}::uuid,
        ${placeholder('packageId')}::uuid, ${placeholder('serviceTitle')}::text, ${placeholder('packageName')}::text, 'pending', ${placeholder('requirements')}::text,
        ${placeholder('priceCents')}::int, ${placeholder('extras')}::jsonb, ${placeholder('totalCents')}::int, ${placeholder('platformFeeCents')}::int,
        ${placeholder('deliveryDays')}::int, ${placeholder('revisionsLeft')}::int, ${placeholder('createdAt')}::timestamptz, ${placeholder('createdAt')}::timestamptz
      from transfer where transfer.moved
      returning id, buyer_id, seller_id, created_at
    ),
    ${parts.orderConversationCtes('placed')},
    created_event as (${eventJobSql('placed')})
    select exists (select 1 from live) as live, transfer.accounts_found, transfer.source_balance, transfer.moved
    from (select 1) as one left join transfer on true`,
  )
  return async (executor: Executor, values: TransferValues & PlacementValues & Record<string, unknown>): Promise<(TransferColumns & { live: boolean }) | undefined> => (await statement(executor, values))[0]
}

export interface OrderFilter {
  status?: OrderStatus
  buyerId?: string
  sellerId?: string
}

export function createOrdersRepository(db: Executor) {
  const whereOf = (filter: OrderFilter): SQL | undefined => {
    const conditions: SQL[] = []
    if (filter.status) conditions.push(eq(orders.status, filter.status))
    if (filter.buyerId) conditions.push(eq(orders.buyerId, filter.buyerId))
    if (filter.sellerId) conditions.push(eq(orders.sellerId, filter.sellerId))
    return conditions.length > 0 ? and(...conditions) : undefined
  }

  return {
    async insert(row: NewOrderRow): Promise<OrderRow> {
      const [inserted] = await db.insert(orders).values(row).returning()
      return inserted!
    },

    async findById(id: string): Promise<OrderRow | undefined> {
      const [row] = await db.select().from(orders).where(eq(orders.id, id))
      return row
    },

    async lockById(id: string): Promise<OrderRow | undefined> {
      const [row] = await db.select().from(orders).where(eq(orders.id, id)).for('update')
      return row
    },

    async update(id: string, patch: Partial<Omit<NewOrderRow, 'id' | 'buyerId' | 'sellerId' | 'serviceId' | 'createdAt'>>): Promise<OrderRow> {
      const [row] = await db.update(orders).set(patch).where(eq(orders.id, id)).returning()
      return row!
    },

    /** Newest first. */
    async list(filter: OrderFilter, offset: number, limit: number): Promise<{ rows: OrderRow[]; total: number }> {
      const where = whereOf(filter)
      const [rows, [counted]] = await Promise.all([
        db.select().from(orders).where(where).orderBy(desc(orders.createdAt), desc(orders.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(orders).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    async countOpenForService(serviceId: string): Promise<number> {
      const [row] = await db
        .select({ total: count() })
        .from(orders)
        .where(and(eq(orders.serviceId, serviceId), inArray(orders.status, [...openStatuses])))
      return row?.total ?? 0
    },

    /**
     * Delivered orders due for auto-completion, locked; rows another worker holds are skipped, so
     * several workers share the work and never complete one order twice.
     */
    lockDueForAutoComplete(now: Date, limit: number): Promise<OrderRow[]> {
      return db
        .select()
        .from(orders)
        .where(and(eq(orders.status, 'delivered'), lte(orders.autoCompleteAt, now)))
        .orderBy(asc(orders.autoCompleteAt))
        .limit(limit)
        .for('update', { skipLocked: true })
    },

    async insertDelivery(row: typeof orderDeliveries.$inferInsert): Promise<OrderDeliveryRow> {
      const [inserted] = await db.insert(orderDeliveries).values(row).returning()
      return inserted!
    },

    deliveriesOf(orderIds: string[]): Promise<OrderDeliveryRow[]> {
      if (orderIds.length === 0) return Promise.resolve([])
      return db.select().from(orderDeliveries).where(inArray(orderDeliveries.orderId, orderIds)).orderBy(asc(orderDeliveries.createdAt), asc(orderDeliveries.id))
    },

    /** Seller statistics: orders by status, one grouped query. */
    async countBySellerAndStatus(sellerId: string): Promise<Map<OrderStatus, number>> {
      const rows = await db
        .select({ status: orders.status, total: sql<number>`count(*)::int` })
        .from(orders)
        .where(eq(orders.sellerId, sellerId))
        .groupBy(orders.status)
      return new Map(rows.map((row) => [row.status, Number(row.total)]))
    },
  }
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>
