import { and, asc, count, desc, eq, inArray, lte, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { jsonFieldsSql, placeholdersOf, tableRelation, type LentRelation } from '../../db/fragments.ts'
import { jsonObjectSql } from '../../db/json-sql.ts'
import { preparedSql } from '../../db/statements.ts'
import { eventJobSql, type EventJobValues } from '../../platform/outbox/events.ts'
import type { SessionJson, SessionParams } from '../auth/auth.module.ts'
import { Offer, type OfferJson, type PricedChoice } from '../catalogue/catalogue.module.ts'
import type { OrderConversationValues, PlacedOrder } from '../messaging/messaging.module.ts'
import type { UserSummary } from '../users/users.module.ts'
import { TRANSFER_AMOUNT_COLUMN, transferColumnsOf, type TransferColumns, type TransferValues } from '../wallet/wallet.module.ts'
import { openStatuses, type OrderStatus } from './order-status.ts'
import { ordersEvents } from './orders.events.ts'
import { isOpenOrderSql, orderDeliveries, orders, sellerOrderFigures, type NewOrderRow, type OrderDeliveryRow, type OrderRow } from './orders.table.ts'

/** A seller's orders counted for statistics and seller levels; orders in dispute are in none of these. */
export interface OrderFigures {
  completed: number
  cancelled: number
  /** Orders with a delivery. */
  delivered: number
  /** Of those, the ones first delivered on or before their due time. */
  onTime: number
}

export interface SellerPerformance {
  lifetime: OrderFigures
  /** Completed, cancelled or first delivered since the given time. */
  recent: OrderFigures
  /** Orders in dispute now. */
  disputed: number
}

/** The fragments of other modules that the placement statement is made of. */
export interface PlacementParts {
  sessionSql: SQL<SessionJson | null>
  sessionLiveSql(session: SQL): SQL<boolean>
  transferSqlWith(computed: { amountCents: SQL; description: SQL }): SQL
  offerSql(serviceId: SQL): SQL<OfferJson | null>
  publicSummarySql(userId: SQL): SQL<UserSummary | null>
  lockOrderableSql(serviceId: SQL): LentRelation<{ id: string }>
  pricedChoiceSql(serviceId: SQL, packageId: SQL, extraIds: SQL): LentRelation<PricedChoice>
  orderConversationCtes(placed: PlacedOrder): SQL
}

/** What the buyer asked for, and the values the statement does not compute (ids, times, the fee rate). */
export interface PlacementValues {
  serviceId: string
  packageId: string
  /** JSON array of extra ids. */
  extraIds: string
  buyerId: string
  requirements: string
  platformFeeBasisPoints: number
}

/** Every placeholder of the placement statement: the transfer's, the session's, the buyer's choice, the conversation's and the event's. */
export type PlacementStatementValues = TransferValues & SessionParams & PlacementValues & OrderConversationValues & EventJobValues

/** The placement statement's row: what was read for the answer and the errors, and what was written. */
export interface PlacementRow extends TransferColumns {
  session: SessionJson | null
  offer: OfferJson | null
  buyer: UserSummary | null
  seller: UserSummary | null
  /** Whether the package is the service's, and the positions of the asked extras that are not its extras. */
  package_found: boolean
  missing_extras: number[]
  /** The service was live and active under its share lock, and everything else held. */
  live: boolean
  /** The order as inserted, when it was. */
  placed: Record<string, unknown> | null
}

/**
 * Placing an order in one statement, so in one round trip and atomic without BEGIN and COMMIT.
 * It reads the caller's session (auth's fragment), the offer and both parties for the answer and
 * the errors, and prices the chosen package and extras (the catalogue's fragment). When the
 * session is live, the service is not the buyer's own, the package and every extra are the
 * service's, and the service is still live and active under its share lock, it moves the total
 * into the buyer's escrow (`ledger_transfer`, priced here), then, only when the money moved,
 * writes the order (the prices copied onto it), its conversation (the messaging module's CTEs)
 * and `order.created` (its data, the order's parties and total, built here). The service checks the same conditions on what
 * was read to answer the error, so a refusal it answers never wrote anything.
 */
export function preparePlacement(parts: PlacementParts) {
  const p = placeholdersOf<PlacementStatementValues>()
  const serviceId = sql`${p('serviceId')}::uuid`
  const buyerId = sql`${p('buyerId')}::uuid`
  // What the statement reads of other modules' fragments, by typed names: the offer's JSON keys
  // (the catalogue's `Offer`), the priced choice's columns, the lock's.
  const offerOf = (json: SQL) => jsonFieldsSql(Offer, json)
  const read = offerOf(sql`read.offer`)
  const choice = parts.pricedChoiceSql(serviceId, sql`${p('packageId')}::uuid`, sql`${p('extraIds')}::json`)
  const priced = choice.columnsOf('priced')
  const lock = parts.lockOrderableSql(serviceId)
  const statement = preparedSql<PlacementStatementValues, PlacementRow>(
    'orders_place',
    sql`with offer as materialized (select ${parts.offerSql(serviceId)} as offer),
    read as materialized (
      select ${parts.sessionSql} as session, o.offer, ${parts.publicSummarySql(buyerId)} as buyer, ${parts.publicSummarySql(sql`${offerOf(sql`o.offer`).sellerId}::uuid`)} as seller
      from offer o),
    priced as materialized (${choice.sql}),
    allowed as materialized (
      select 1 from read, priced where ${parts.sessionLiveSql(sql`read.session`)} and ${read.sellerId}::uuid <> ${buyerId}
        and ${priced.packageId} is not null and json_array_length(${priced.missing}) = 0),
    live as materialized (select ${lock.columnsOf('locked').id} from (${lock.sql}) locked where exists (select 1 from allowed)),
    transfer as (
      select ${transferColumnsOf('t').selected}, ${priced.totalCents} as ${sql.identifier(TRANSFER_AMOUNT_COLUMN)}
      from priced, ${parts.transferSqlWith({ amountCents: sql`${priced.totalCents}::bigint`, description: sql`'Order: ' || (select ${read.title} from read)` })} t
      where exists (select 1 from live)),
    placed as (
      insert into ${orders} (id, buyer_id, seller_id, service_id, package_id, service_title, package_name, status, requirements,
        price_cents, extras, total_cents, platform_fee_cents, delivery_days, revisions_left, created_at, updated_at)
      select ${p('orderId')}::uuid, ${buyerId}, ${read.sellerId}::uuid, ${serviceId}, ${priced.packageId}, ${read.title}, ${priced.packageName}, 'pending',
        ${p('requirements')}::text, ${priced.priceCents}, ${priced.extras}::jsonb, ${priced.totalCents},
        -- the fee rounded half-up to the cent
        (${priced.totalCents}::bigint * ${p('platformFeeBasisPoints')}::int + 5000) / 10000, ${priced.deliveryDays}, ${priced.revisions},
        ${p('createdAt')}::timestamptz, ${p('createdAt')}::timestamptz
      from read, priced, transfer where ${transferColumnsOf('transfer').moved}
      returning *
    ),
    ${parts.orderConversationCtes(tableRelation('placed', orders, ['id', 'buyerId', 'sellerId', 'createdAt']))},
    created_event as (${eventJobSql(
      'placed',
      jsonObjectSql(ordersEvents.orderCreated.data, {
        orderId: sql`placed.id`,
        serviceId: sql`placed.service_id`,
        buyerId: sql`placed.buyer_id`,
        sellerId: sql`placed.seller_id`,
        total: sql`placed.total_cents / 100.0::float8`,
      }),
    )})
    select read.session, read.offer, read.buyer, read.seller, ${priced.packageId} is not null as package_found, ${priced.missing} as missing_extras,
      exists (select 1 from live) as live,
      ${transferColumnsOf('transfer').selected}, transfer.${sql.identifier(TRANSFER_AMOUNT_COLUMN)}, (select row_to_json(placed) from placed) as placed
    from read cross join priced left join transfer on true`,
  )
  return async (executor: Executor, values: PlacementStatementValues): Promise<PlacementRow> => (await statement(executor, values))[0]!
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
    async findById(id: string): Promise<OrderRow | undefined> {
      const [row] = await db.select().from(orders).where(eq(orders.id, id))
      return row
    },

    async lockById(id: string): Promise<OrderRow | undefined> {
      const [row] = await db.select().from(orders).where(eq(orders.id, id)).for('update')
      return row
    },

    /** An order written in Node (one from a custom offer); package orders are placed by `preparePlacement`'s statement. */
    async insert(values: NewOrderRow): Promise<OrderRow> {
      const [row] = await db.insert(orders).values(values).returning()
      return row!
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

    /** A seller's kept order figures (seller-order-figures.sql) and open orders (their partial index), in one statement. */
    async sellerFigures(sellerId: string): Promise<SellerOrderFigures> {
      // The partial index's own predicate, so that the planner can prove it and count from the index.
      const open = db.$count(orders, and(eq(orders.sellerId, sellerId), isOpenOrderSql(orders.status)))
      const [row] = await db
        .select({ open: sql<number>`${open}`.mapWith(Number), completed: sellerOrderFigures.completed, cancelled: sellerOrderFigures.cancelled, delivered: sellerOrderFigures.delivered, onTime: sellerOrderFigures.onTime })
        .from(sql`(select 1) as one`)
        .leftJoin(sellerOrderFigures, eq(sellerOrderFigures.sellerId, sellerId))
      const figures = { completed: row?.completed ?? 0, cancelled: row?.cancelled ?? 0, delivered: row?.delivered ?? 0, onTime: row?.onTime ?? 0 }
      return { orders: Number(row?.open ?? 0) + figures.completed + figures.cancelled, ...figures }
    },

  }
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>

/** A seller's orders in any status, completed and cancelled ones, delivered ones (not in dispute now) and those first delivered by their due time. */
export interface SellerOrderFigures {
  orders: number
  completed: number
  cancelled: number
  delivered: number
  onTime: number
}

/**
 * Several sellers' figures in one grouped query. An order in dispute counts only as disputed
 * until staff resolve it. The first delivery decides whether an order was on time, so a
 * redelivery after a revision request does not make it late.
 */
export async function sellerPerformanceOf(db: Executor, sellerIds: string[], since: Date): Promise<Map<string, SellerPerformance>> {
  if (sellerIds.length === 0) return new Map()
  // Written with its own alias: inside a selected field Drizzle leaves columns unqualified, and `id` would be the delivery's.
  const delivery = sql.identifier('first_delivery')
  const firstDelivery = sql<string | null>`(select min(${delivery}.created_at) from ${orderDeliveries} as ${delivery} where ${delivery}.order_id = ${orders}.id)`
  const sellerOrders = db
    .select({ sellerId: orders.sellerId, status: orders.status, completedAt: orders.completedAt, cancelledAt: orders.cancelledAt, dueAt: orders.dueAt, deliveredAt: firstDelivery.as('first_delivered_at') })
    .from(orders)
    .where(inArray(orders.sellerId, sellerIds))
    .as('seller_orders')
  const from = sql`${since.toISOString()}::timestamptz`
  const counted = (condition: SQL) => sql<number>`(count(*) filter (where ${condition}))::int`
  const onTime = sql`${sellerOrders.deliveredAt} <= ${sellerOrders.dueAt}`
  const rows = await db
    .select({
      sellerId: sellerOrders.sellerId,
      completed: counted(sql`${sellerOrders.status} = 'completed'`),
      cancelled: counted(sql`${sellerOrders.status} = 'cancelled'`),
      delivered: counted(sql`${sellerOrders.status} <> 'disputed' and ${sellerOrders.deliveredAt} is not null`),
      onTime: counted(sql`${sellerOrders.status} <> 'disputed' and ${onTime}`),
      recentCompleted: counted(sql`${sellerOrders.status} = 'completed' and ${sellerOrders.completedAt} >= ${from}`),
      recentCancelled: counted(sql`${sellerOrders.status} = 'cancelled' and ${sellerOrders.cancelledAt} >= ${from}`),
      recentDelivered: counted(sql`${sellerOrders.status} <> 'disputed' and ${sellerOrders.deliveredAt} >= ${from}`),
      recentOnTime: counted(sql`${sellerOrders.status} <> 'disputed' and ${sellerOrders.deliveredAt} >= ${from} and ${onTime}`),
      disputed: counted(sql`${sellerOrders.status} = 'disputed'`),
    })
    .from(sellerOrders)
    .groupBy(sellerOrders.sellerId)
  return new Map(
    rows.map((row) => [
      row.sellerId,
      {
        lifetime: { completed: row.completed, cancelled: row.cancelled, delivered: row.delivered, onTime: row.onTime },
        recent: { completed: row.recentCompleted, cancelled: row.recentCancelled, delivered: row.recentDelivered, onTime: row.recentOnTime },
        disputed: row.disputed,
      },
    ]),
  )
}
