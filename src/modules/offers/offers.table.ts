import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { services } from '../catalogue/services.table.ts'
import { conversations } from '../messaging/messaging.table.ts'
import type { OfferStatus } from '../messaging/messaging.module.ts'
import { orders } from '../orders/orders.table.ts'
import { users } from '../users/users.table.ts'

/** The statuses of an offer, as the messaging module's `Offer` answer lists them. */
const offerStatuses = ['pending', 'accepted', 'declined', 'withdrawn', 'expired'] as const satisfies readonly OfferStatus[]

/**
 * A custom offer (docs/offers.md): a seller's terms for one buyer, made in their direct
 * conversation. It is pending until the buyer accepts it (an order is placed from it, `order_id`),
 * declines it, the seller withdraws it, or `expires_at` passes; every change happens under the
 * offer's row lock, so only one of them ever wins.
 */
export const offers = pgTable(
  'offers',
  {
    id: uuid('id').primaryKey(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    senderId: uuid('sender_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    recipientId: uuid('recipient_id')
      .notNull()
      .references(() => users.id, { onDelete: 'restrict' }),
    serviceId: uuid('service_id').references(() => services.id, { onDelete: 'restrict' }),
    title: text('title').notNull(),
    description: text('description').notNull(),
    priceCents: integer('price_cents').notNull(),
    deliveryDays: integer('delivery_days').notNull(),
    revisions: integer('revisions').notNull(),
    status: text('status', { enum: offerStatuses }).notNull(),
    declineReason: text('decline_reason'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    orderId: uuid('order_id')
      .unique()
      .references(() => orders.id, { onDelete: 'restrict' }),
    respondedAt: timestamp('responded_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    index('offers_sender_created_idx').on(table.senderId, table.createdAt),
    index('offers_recipient_created_idx').on(table.recipientId, table.createdAt),
    // The worker's query: pending offers whose time has passed.
    index('offers_pending_expiry_idx')
      .on(table.expiresAt)
      .where(sql`${table.status} = 'pending'`),
    check('offers_price_positive', sql`${table.priceCents} > 0`),
    check('offers_delivery_days_range', sql`${table.deliveryDays} between 1 and 90`),
    check('offers_revisions_range', sql`${table.revisions} between 0 and 10`),
    check('offers_two_parties', sql`${table.senderId} <> ${table.recipientId}`),
    check('offers_accepted_has_order', sql`(${table.status} = 'accepted') = (${table.orderId} is not null)`),
  ],
)

export type OfferRow = typeof offers.$inferSelect
export type NewOfferRow = typeof offers.$inferInsert
