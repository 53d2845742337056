import type { Actor } from '../../access/access.ts'
import type { Db, Executor, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { defineStats, readCounters } from '../../platform/statistics/statistics.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { SessionCheck } from '../auth/auth.module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { MessagingService } from '../messaging/messaging.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { createOrderAnswers, mayView } from './order-answers.service.ts'
import { createOrderMoves } from './order-moves.service.ts'
import { createOrderPlacement } from './order-placement.service.ts'
import { createOrderProgress } from './order-progress.service.ts'
import { createOrderRequests } from './order-requests.service.ts'
import { createOrderResolution } from './order-resolution.service.ts'
import { orderStatuses, type OrderStatus } from './order-status.ts'
import { createOrdersRepository, sellerPerformanceOf, type OrderFilter } from './orders.repository.ts'
import { OrdersStats } from './orders.schemas.ts'

export interface OrdersDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  /** Where the links in e-mails point. */
  appUrl: string
  sessions: SessionCheck
  ledger: Pick<LedgerService, 'transfer' | 'book' | 'transferSqlWith' | 'creditEarning' | 'ordersStillClearing'>
  catalogue: Pick<CatalogueService, 'offerSql' | 'lockOrderableSql' | 'pricedChoiceSql' | 'recordCompletedOrder' | 'registerOpenOrdersCounter'>
  users: Pick<UsersService, 'publicSummariesOf' | 'publicSummarySql' | 'findAccountById'>
  audit: Pick<AuditService, 'record'>
  notifications: Pick<NotificationsService, 'emailWanted'>
  messaging: Pick<MessagingService, 'orderConversationCtes' | 'orderConversationValues' | 'conversationsOfOrders' | 'isOnline' | 'writeOrderNote' | 'publishMessage'>
  uploads: Pick<UploadsService, 'filesOf' | 'urlOf' | 'storeFiles' | 'recordFiles' | 'discardFiles' | 'registerAccessPolicy'>
  /** The platform's share in basis points (10 % = 1000). */
  platformFeeBasisPoints: number
  /** How long after completion the buyer may tip. */
  tipWindowMs: number
  autoCompleteAfterMs: number
  /** How long a request between the parties stays open unanswered (ORDER_REQUEST_DAYS). */
  requestExpiresAfterMs: number
}

/**
 * Orders (docs/orders.md): placing into escrow, the moves of the state machine in
 * `order-status.ts`, deliveries, auto-completion, the requests between the parties and the
 * reads, each group in its own file. Every
 * move locks the order row first, so two moves at the same moment cannot both win, and moves its
 * money through the ledger and writes its events in the same transaction.
 */
export function createOrdersService(deps: OrdersDeps) {
  const { db, uploads, catalogue } = deps
  const answers = createOrderAnswers(deps)
  const moves = createOrderMoves({ ...deps, answers })

  // Who may read the delivery files of an order besides staff with view_orders: its two parties.
  uploads.registerAccessPolicy('order', async (orderId, actor) => {
    const row = await createOrdersRepository(db).findById(orderId)
    return row !== undefined && (row.buyerId === actor.id || row.sellerId === actor.id)
  })
  catalogue.registerOpenOrdersCounter((tx, serviceId) => createOrdersRepository(tx).countOpenForService(serviceId))

  async function list(actor: Actor, filter: OrderFilter, page: PageRequest) {
    const { rows, total } = await createOrdersRepository(db).list(filter, offsetOf(page), page.limit)
    return toPage(await answers.describeAll(db, rows, actor), total, page)
  }

  return {
    ...createOrderPlacement({ ...deps, answers }),
    ...createOrderProgress({ ...deps, moves }),
    ...createOrderResolution({ ...deps, moves }),
    ...createOrderRequests({ ...deps, moves }),
    completeDueOrders: (limit?: number) => moves.completeDueOrders(limit),

    /** `GET /orders/{id}`: the parties and staff with view_orders; anyone else 404. */
    async getOrder(actor: Actor, orderId: string) {
      const row = await createOrdersRepository(db).findById(orderId)
      if (!row || !mayView(row, actor)) throw notFound('Order')
      return answers.describe(db, row, actor)
    },

    listPurchases: (actor: Actor, query: PageRequest & { status?: OrderStatus }) => list(actor, { buyerId: actor.id, status: query.status }, query),
    listSales: (actor: Actor, query: PageRequest & { status?: OrderStatus }) => list(actor, { sellerId: actor.id, status: query.status }, query),
    /** `GET /admin/orders` (view_orders, checked by the route). */
    listForStaff: (actor: Actor, query: PageRequest & OrderFilter) => list(actor, { status: query.status, buyerId: query.buyerId, sellerId: query.sellerId }, query),

    /** For reviews: the order under a row lock, in the caller's transaction. */
    lockOrder: (tx: Tx, orderId: string) => createOrdersRepository(tx).lockById(orderId),
    /** For reviews: the order's row, to check who its parties are and when it completed. */
    findOrder: (executor: Executor, orderId: string) => createOrdersRepository(executor).findById(orderId),

    /** For statistics: a seller's order figures, kept by triggers (one row, whatever the seller's history). */
    sellerOrderFigures: (executor: Executor, sellerId: string) => createOrdersRepository(executor).sellerFigures(sellerId),

    /** For statistics and seller levels: each seller's completed, cancelled, delivered and on-time orders, lifetime and since `since` (a seller without orders is absent). */
    sellerPerformance: (executor: Executor, sellerIds: string[], since: Date) => sellerPerformanceOf(executor, sellerIds, since),

    /** The orders section of `GET /admin/stats`: counters kept by a trigger on orders (migration 0016). */
    statistics: defineStats('orders', OrdersStats, async (executor) => {
      const counters = await readCounters(executor, 'orders')
      const byStatus = Object.fromEntries(orderStatuses.map((status) => [status, counters.get(status) ?? 0])) as Record<OrderStatus, number>
      return { total: Object.values(byStatus).reduce((sum, count) => sum + count, 0), byStatus, grossVolume: fromCents(counters.get('gross_volume_cents') ?? 0) }
    }),
  }
}

export type OrdersService = ReturnType<typeof createOrdersService>
