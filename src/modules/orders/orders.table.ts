import { sql, type SQLWrapper } from 'drizzle-orm'
import { check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { services } from '../catalogue/services.table.ts'
import { users } from '../users/users.table.ts'
import { openStatuses, orderStatuses, type MoveRole, type OrderAction, type OrderStatus } from './order-status.ts'

/**
 * An order's status is open, written with the statuses as constants: the partial index of open
 * orders and the count that reads it share this text, so the planner can prove the index serves
 * the count (a list of placeholders would not).
 */
export const isOpenOrderSql = (status: SQLWrapper) => sql`${status} in (${sql.raw(openStatuses.map((name) => `'${name}'`).join(', '))})`

/** An extra as it was priced when the order was placed. */
export interface OrderedExtra {
  id: string
  title: string
  priceCents: number
  additionalDays: number
}

/** One move of an order, as its timeline keeps it: what was done, by whom, with which reason, when. */
export interface OrderMove {
  action: OrderAction
  /** The status the move led to. */
  status: OrderStatus
  by: MoveRole
  reason: string | null
  /** ISO 8601 UTC. */
  at: string
}

/**
 * An order (docs/orders.md). Everything the buyer paid for is copied at placement (package
 * name, price, delivery days, revisions, extras, the fee), so a later edit of the service, which
 * replaces its packages and extras with new ids, changes no existing order. The money sits in the
 * buyer's escrow account from placement until the order completes or is cancelled.
 */
export const orders = pgTable(
  'orders',
  {
    id: uuid('id').primaryKey(),
    buyerId: uuid('buyer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    sellerId: uuid('seller_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    /** Null for an order from a custom offer that named no service. */
    serviceId: uuid('service_id').references(() => services.id, { onDelete: 'restrict' }),
    /** The package's id at placement; packages are replaced on every edit, so no foreign key. Null for an order from a custom offer. */
    packageId: uuid('package_id'),
    /** The custom offer the order was placed from (the offers module keys it; no foreign key, it calls in). */
    offerId: uuid('offer_id').unique(),
    serviceTitle: text('service_title').notNull(),
    packageName: text('package_name').notNull(),
    status: text('status', { enum: orderStatuses }).notNull(),
    requirements: text('requirements').notNull().default(''),
    priceCents: integer('price_cents').notNull(),
    extras: jsonb('extras').$type<OrderedExtra[]>().notNull(),
    totalCents: integer('total_cents').notNull(),
    /** The platform's fee on what the order holds: fixed at placement on the total, recomputed on what is left by a partial refund, and set to the fee taken by a split resolution. */
    platformFeeCents: integer('platform_fee_cents').notNull(),
    /**
     * The fee fixed at placement, kept here when a partial refund recomputes `platform_fee_cents`
     * on what is left: the order's fee rate is this over the total. Null while
     * `platform_fee_cents` is still that fee.
     */
    placementFeeCents: integer('placement_fee_cents'),
    /** What went back to the buyer: from escrow before the order ended (accepted partial refunds, a split resolution's refund), and by staff refunds of earnings still clearing after it completed (the tip's included). */
    refundedCents: integer('refunded_cents').notNull().default(0),
    deliveryDays: integer('delivery_days').notNull(),
    /** Null means unlimited revisions. */
    revisionsLeft: integer('revisions_left'),
    /** The reason given with the latest move (null when it had none). */
    statusReason: text('status_reason'),
    /** Every move since placement, oldest first; appended under the order's row lock. */
    timeline: jsonb('timeline').$type<OrderMove[]>().notNull().default([]),
    /** The buyer's tip after completion, whole cents (null: none); given once. */
    tipCents: integer('tip_cents'),
    tippedAt: timestamp('tipped_at', { withTimezone: true, mode: 'date' }),
    dueAt: timestamp('due_at', { withTimezone: true, mode: 'date' }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
    /** Set at each delivery; the worker completes a delivered order once this has passed. */
    autoCompleteAt: timestamp('auto_complete_at', { withTimezone: true, mode: 'date' }),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    cancelledAt: timestamp('cancelled_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    index('orders_buyer_created_idx').on(table.buyerId, table.createdAt),
    index('orders_seller_created_idx').on(table.sellerId, table.createdAt),
    // A seller's open orders, counted for the profile's statistics without reading the ended ones.
    index('orders_seller_open_idx')
      .on(table.sellerId)
      .where(isOpenOrderSql(table.status)),
    index('orders_service_status_idx').on(table.serviceId, table.status),
    index('orders_status_created_idx').on(table.status, table.createdAt),
    // The worker's query: delivered orders whose auto-complete time has passed.
    index('orders_auto_complete_idx')
      .on(table.autoCompleteAt)
      .where(sql`${table.status} = 'delivered'`),
    check('orders_total_positive', sql`${table.totalCents} > 0`),
    check('orders_fee_within_total', sql`${table.platformFeeCents} >= 0 and ${table.platformFeeCents} <= ${table.totalCents}`),
    check('orders_placement_fee_within_total', sql`${table.placementFeeCents} is null or (${table.placementFeeCents} >= 0 and ${table.placementFeeCents} <= ${table.totalCents})`),
    check('orders_refund_within_total', sql`${table.refundedCents} >= 0 and ${table.refundedCents} + ${table.platformFeeCents} <= ${table.totalCents} + coalesce(${table.tipCents}, 0)`),
    check('orders_tip_positive', sql`${table.tipCents} is null or ${table.tipCents} > 0`),
    check('orders_revisions_not_negative', sql`${table.revisionsLeft} is null or ${table.revisionsLeft} >= 0`),
  ],
)

/** One delivery: the seller's message and the files (uploads tagged `order_delivery` of this order). */
export const orderDeliveries = pgTable(
  'order_deliveries',
  {
    id: uuid('id').primaryKey(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    message: text('message').notNull(),
    fileIds: uuid('file_ids').array().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [index('order_deliveries_order_idx').on(table.orderId, table.createdAt)],
)

/**
 * A seller's ended and delivered orders, kept by triggers in the transaction of every change they
 * count (seller-order-figures.sql): completed and cancelled orders, orders delivered (a first
 * delivery, and not in dispute now) and of those the ones first delivered by their due time. A
 * placement changes none of them, so placing orders never queues on the seller's row (decision
 * 0228); the seller's open orders are counted from `orders_seller_open_idx` instead. A profile's
 * statistics read one row and that count, whatever the seller's history.
 */
export const sellerOrderFigures = pgTable('seller_order_figures', {
  sellerId: uuid('seller_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'restrict' }),
  completed: integer('completed').notNull().default(0),
  cancelled: integer('cancelled').notNull().default(0),
  delivered: integer('delivered').notNull().default(0),
  onTime: integer('on_time').notNull().default(0),
})

export type OrderRow = typeof orders.$inferSelect
export type NewOrderRow = typeof orders.$inferInsert
export type OrderDeliveryRow = typeof orderDeliveries.$inferSelect
