import { can, isUnchecked, type Actor, type Caller } from '../../access/access.ts'
import type { Db, Executor, Tx } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { fieldError, forbidden, notFound, validationError, type FieldError } from '../../lib/errors.ts'
import { rowFromJson } from '../../db/json-rows.ts'
import { isUuid, newId } from '../../lib/ids.ts'
import { fromCents } from '../../lib/money.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { StagedFile } from '../../platform/files.ts'
import { emitEvent, eventJobValuesWithoutData } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { defineStats, readCounters } from '../../platform/statistics/statistics.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { SessionCheck } from '../auth/auth.module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { MessageRow, MessagingService } from '../messaging/messaging.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { createOrderAnswers, mayView, sellerEarningCents } from './order-answers.service.ts'
import { allowedMoves, decide, orderStatuses, systemMove, type OrderStatus, type Transition } from './order-status.ts'
import { invalidTransition, ownService } from './orders.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { createOrdersRepository, preparePlacement, type OrderFilter, type PartyJson } from './orders.repository.ts'
import { OrdersStats } from './orders.schemas.ts'
import { orders, type OrderRow } from './orders.table.ts'

export interface PlaceOrderInput {
  serviceId: string
  packageId: string
  requirements?: string
  extras?: string[]
}

export interface OrdersDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  sessions: SessionCheck
  ledger: Pick<LedgerService, 'transfer' | 'book' | 'transferSqlWith'>
  catalogue: Pick<CatalogueService, 'offerSql' | 'lockOrderableSql' | 'pricedChoiceSql' | 'recordCompletedOrder' | 'registerOpenOrdersCounter'>
  users: Pick<UsersService, 'publicSummariesOf' | 'publicSummarySql'>
  audit: Pick<AuditService, 'record'>
  messaging: Pick<MessagingService, 'orderConversationCtes' | 'orderConversationValues' | 'conversationsOfOrders' | 'isOnline' | 'writeOrderNote' | 'publishMessage'>
  uploads: Pick<UploadsService, 'filesOf' | 'urlOf' | 'storeFiles' | 'recordFiles' | 'discardFiles' | 'registerAccessPolicy'>
  /** The platform's share in basis points (10 % = 1000). */
  platformFeeBasisPoints: number
  /** How long after completion the buyer may tip. */
  tipWindowMs: number
  autoCompleteAfterMs: number
}

/**
 * An id as the statement takes it: a well-formed UUID, or else (from a caller the route's schema
 * did not check) the nil UUID, which is no row's id, so the answer is a 404 or a 400, not a
 * failed cast.
 */
const asUuid = (id: string): string => (isUuid(id) ? id : '00000000-0000-0000-0000-000000000000')

const deliverySlot = (orderId: string) => ({ objectType: 'order', objectId: orderId, tag: 'order_delivery' }) as const

/** Staff with any order permission reach an order through the status route; the permission of the move decides then (403). */
const mayActOn = (row: OrderRow, actor: Actor) => mayView(row, actor) || can(actor, 'manage_orders') || can(actor, 'resolve_disputes')

/**
 * Orders (docs/orders.md): placing into escrow, the moves of the state machine in
 * `order-status.ts`, deliveries, auto-completion and the reads. Every move locks the order row
 * first, so two moves at the same moment cannot both win, and moves its money through the ledger
 * and writes its events in the same transaction.
 */
export function createOrdersService(deps: OrdersDeps) {
  const { db, clock, outbox, sessions, ledger, catalogue, users, uploads, audit, messaging, platformFeeBasisPoints, autoCompleteAfterMs } = deps
  const answers = createOrderAnswers(deps)
  const place = preparePlacement({
    sessionSql: sessions.sql,
    sessionLiveSql: sessions.liveSql,
    transferSqlWith: ledger.transferSqlWith,
    offerSql: catalogue.offerSql,
    publicSummarySql: users.publicSummarySql,
    lockOrderableSql: catalogue.lockOrderableSql,
    pricedChoiceSql: catalogue.pricedChoiceSql,
    orderConversationCtes: messaging.orderConversationCtes,
  })

  // Who may read the delivery files of an order besides staff with view_orders: its two parties.
  uploads.registerAccessPolicy('order', async (orderId, actor) => {
    const row = await createOrdersRepository(db).findById(orderId)
    return row !== undefined && (row.buyerId === actor.id || row.sellerId === actor.id)
  })
  catalogue.registerOpenOrdersCounter((tx, serviceId) => createOrdersRepository(tx).countOpenForService(serviceId))

  const parties = (row: Pick<OrderRow, 'id' | 'serviceId' | 'buyerId' | 'sellerId'>) => ({ orderId: row.id, serviceId: row.serviceId, buyerId: row.buyerId, sellerId: row.sellerId })

  /**
   * Applies one decided move to a locked order: its effect on dates and revisions, its money, its
   * events. The single place where an order changes status.
   */
  async function applyMove(tx: Tx, row: OrderRow, move: Transition, by: string, reason?: string): Promise<OrderRow> {
    const now = clock.now()
    // The row is locked, so the timeline read with it is the latest: appending here loses no move.
    const timeline = [...row.timeline, { action: move.action, status: move.to, by: move.by, reason: reason ?? null, at: now.toISOString() }]
    const patch: Partial<OrderRow> = { status: move.to, updatedAt: now, statusReason: reason ?? null, timeline }
    const buyerEscrow = { userId: row.buyerId, kind: 'escrow' } as const
    if (move.action === 'accept') patch.dueAt = new Date(now.getTime() + row.deliveryDays * DAY)
    if (move.action === 'request_revision') {
      patch.revisionsLeft = row.revisionsLeft === null ? null : row.revisionsLeft - 1
      patch.autoCompleteAt = null
    }
    if (move.to === 'disputed') patch.autoCompleteAt = null
    if (move.to === 'completed') {
      const earning = sellerEarningCents(row)
      if (earning > 0) await ledger.transfer(tx, { from: buyerEscrow, to: { userId: row.sellerId, kind: 'available' }, amountCents: earning, type: 'order_earning', description: `Earning: ${row.serviceTitle}`, orderId: row.id })
      if (row.platformFeeCents > 0) await ledger.transfer(tx, { from: buyerEscrow, to: { platform: 'revenue' }, amountCents: row.platformFeeCents, type: 'order_earning', description: `Platform fee: ${row.serviceTitle}`, orderId: row.id })
      if (row.serviceId !== null) await catalogue.recordCompletedOrder(tx, row.serviceId)
      Object.assign(patch, { completedAt: now, autoCompleteAt: null })
    }
    if (move.to === 'cancelled') {
      await ledger.transfer(tx, { from: buyerEscrow, to: { userId: row.buyerId, kind: 'available' }, amountCents: row.totalCents, type: 'order_refund', description: `Refund: ${row.serviceTitle}`, orderId: row.id })
      Object.assign(patch, { cancelledAt: now, autoCompleteAt: null })
    }
    const updated = await createOrdersRepository(tx).update(row.id, patch)
    await emitEvent(outbox, tx, ordersEvents.orderStatusChanged, { ...parties(row), from: row.status, to: move.to, by }, now)
    if (move.to === 'completed') {
      await emitEvent(
        outbox,
        tx,
        ordersEvents.orderCompleted,
        { ...parties(row), total: fromCents(row.totalCents), platformFee: fromCents(row.platformFeeCents), sellerEarning: fromCents(sellerEarningCents(row)), automatic: by === 'system' },
        now,
      )
    }
    if (move.to === 'cancelled') await emitEvent(outbox, tx, ordersEvents.orderCancelled, { ...parties(row), total: fromCents(row.totalCents) }, now)
    if (move.to === 'disputed') await emitEvent(outbox, tx, ordersEvents.orderDisputed, { ...parties(row), reason: reason! }, now)
    return updated
  }

  const staffMove = (row: OrderRow, actor: Actor, to: OrderStatus): Transition | undefined =>
    allowedMoves(row, actor).find((move) => move.by === 'staff' && move.to === to)

  /**
   * Staff cancel an order (manage_orders), from the status route or `POST /admin/orders/{id}/cancel`.
   * Every staff cancel passes here, and is recorded in the audit log in its transaction.
   */
  async function cancelAsStaff(tx: Tx, actor: Actor, row: OrderRow, reason: string | undefined): Promise<OrderRow> {
    const move = staffMove(row, actor, 'cancelled')
    if (!move || move.permission !== 'manage_orders') {
      if (!can(actor, 'manage_orders')) throw forbidden('Requires the manage_orders permission')
      throw invalidTransition(row.status, 'cancelled', allowedMoves(row, actor))
    }
    const updated = await applyMove(tx, row, move, actor.id, reason)
    await recordStaffMove(tx, 'order.cancel', actor, row, updated, reason)
    return updated
  }

  const recordStaffMove = (tx: Tx, action: string, actor: Actor, before: OrderRow, after: OrderRow, reason: string | undefined) =>
    audit.record(tx, {
      action,
      actor,
      targetType: 'order',
      targetId: before.id,
      reason: reason ?? null,
      before: { status: before.status, total: fromCents(before.totalCents) },
      after: { status: after.status },
    })

  /**
   * Staff resolve a dispute to completed or cancelled (resolve_disputes). Every resolution passes
   * here, and is recorded in the audit log in its transaction.
   */
  async function resolveDispute(tx: Tx, actor: Actor, row: OrderRow, to: 'completed' | 'cancelled', reason: string | undefined): Promise<OrderRow> {
    const move = staffMove(row, actor, to)
    if (!move || move.permission !== 'resolve_disputes') {
      if (!can(actor, 'resolve_disputes')) throw forbidden('Requires the resolve_disputes permission')
      throw invalidTransition(row.status, to, allowedMoves(row, actor))
    }
    const updated = await applyMove(tx, row, move, actor.id, reason)
    await recordStaffMove(tx, 'dispute.resolve', actor, row, updated, reason)
    return updated
  }

  /** Locks an order the actor may act on (404 otherwise), runs `change`, and answers it as the actor sees it. */
  async function changeOrder(actor: Actor, orderId: string, visible: (row: OrderRow) => boolean, change: (tx: Tx, row: OrderRow) => Promise<OrderRow>) {
    const row = await db.transaction(async (tx) => {
      const current = await createOrdersRepository(tx).lockById(orderId)
      if (!current || !visible(current)) throw notFound('Order')
      return change(tx, current)
    })
    return answers.describe(db, row, actor)
  }

  async function list(actor: Actor, filter: OrderFilter, page: PageRequest) {
    const { rows, total } = await createOrdersRepository(db).list(filter, offsetOf(page), page.limit)
    return toPage(await answers.describeAll(db, rows, actor), total, page)
  }

  /** Completes one due order, if any is left that no other worker holds; false when there is none. */
  const completeOneDue = () =>
    db.transaction(async (tx) => {
      const [row] = await createOrdersRepository(tx).lockDueForAutoComplete(clock.now(), 1)
      if (!row) return false
      await applyMove(tx, row, systemMove('delivered', 'completed')!, 'system')
      return true
    })

  return {
    /**
     * `POST /orders`: one statement (`preparePlacement`) reads the caller's session, the offer
     * and both parties, prices the package and extras as they are now, and, when everything
     * holds, moves the total into the buyer's escrow and writes the order (the prices copied onto
     * it), its conversation and `order.created`. The errors are decided here on what it read, in
     * the order a client expects: 401, 404, 422 OWN_SERVICE, 400 naming the fields, 422
     * INSUFFICIENT_FUNDS; none of them wrote anything.
     */
    async placeOrder(caller: Caller, input: PlaceOrderInput) {
      const buyerId = isUnchecked(caller) ? caller.claims.sub : caller.id
      const id = newId()
      const conversation = messaging.orderConversationValues()
      let answer: { actor: Actor; parties: [PartyJson, PartyJson]; placed: Record<string, unknown> | null } | undefined
      const transfer = { from: { userId: buyerId, kind: 'available' }, to: { userId: buyerId, kind: 'escrow' }, type: 'order_payment', orderId: id } as const
      await ledger.book(db, transfer, async (transferValues) => {
        const row = await place(db, {
          ...transferValues,
          ...sessions.params(caller),
          serviceId: asUuid(input.serviceId),
          packageId: asUuid(input.packageId),
          extraIds: JSON.stringify(input.extras ?? []),
          buyerId,
          requirements: input.requirements ?? '',
          platformFeeBasisPoints,
          ...conversation,
          ...eventJobValuesWithoutData(ordersEvents.orderCreated, new Date(transferValues.createdAt)),
        })
        // Every refusal below is decided on what the statement matched, so it also stopped the write.
        const actor = await sessions.actorOf(caller, row.session)
        const { offer, buyer, seller } = row
        if (!offer || offer.status !== 'active' || !buyer || !seller) throw notFound('Service')
        if (offer.sellerId === actor.id) throw ownService()
        const problems: FieldError[] = []
        if (!row.package_found) problems.push({ field: 'packageId', message: 'is not a package of this service' })
        for (const index of row.missing_extras) problems.push({ field: `extras.${index}`, message: 'is not an extra of this service' })
        if (problems.length > 0) throw validationError(problems)
        if (!row.live) throw notFound('Service')
        answer = { actor, parties: [buyer, seller], placed: row.placed }
        return row
      })
      const placed = answer!.placed
      if (!placed) throw new Error('the order was paid for but not written')
      return answers.describeNew(rowFromJson(orders, placed), answer!.parties, conversation.orderConversationId, answer!.actor)
    },

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

    /**
     * `PUT /orders/{id}/status`: the move the table allows this caller now, or 422
     * INVALID_TRANSITION listing the moves it may make; staff moves go through the staff functions.
     * A party's `reason` is also their message to the other party in the order's conversation,
     * written in the move's transaction and pushed to both after it commits.
     */
    async changeStatus(actor: Actor, orderId: string, to: OrderStatus, reason: string | undefined) {
      // Whether the other party is online decides the e-mail about the note; presence is read
      // before the transaction, never inside it.
      const before = reason === undefined ? undefined : await createOrdersRepository(db).findById(orderId)
      const otherParty = before && (actor.id === before.buyerId ? before.sellerId : actor.id === before.sellerId ? before.buyerId : undefined)
      const otherOnline = otherParty !== undefined && (await messaging.isOnline(otherParty))
      let note: { message: MessageRow; recipientId: string } | undefined
      const answer = await changeOrder(
        actor,
        orderId,
        (row) => mayActOn(row, actor),
        async (tx, row) => {
          const decision = decide(row, actor, to)
          if (!decision.ok) {
            if (decision.forbidden) throw forbidden(`Requires the ${to === 'cancelled' && row.status !== 'disputed' ? 'manage_orders' : 'resolve_disputes'} permission`)
            const hint = to === 'delivered' && row.status === 'in_progress' ? ' through this route (deliver with POST /orders/{orderId}/deliver)' : ''
            throw invalidTransition(row.status, to, decision.allowed, hint)
          }
          const move = decision.transition
          if (move.needsReason && !reason) throw fieldError('reason', `is required to move an order to ${to}`)
          if (move.by === 'staff') return move.permission === 'manage_orders' ? cancelAsStaff(tx, actor, row, reason) : resolveDispute(tx, actor, row, to as 'completed' | 'cancelled', reason)
          const updated = await applyMove(tx, row, move, actor.id, reason)
          if (reason !== undefined) {
            const recipientId = move.by === 'buyer' ? row.sellerId : row.buyerId
            const message = await messaging.writeOrderNote(tx, { orderId: row.id, senderId: actor.id, recipientId, content: reason, recipientOnline: otherOnline && recipientId === otherParty })
            note = { message, recipientId }
          }
          return updated
        },
      )
      if (note) await messaging.publishMessage(note.message, note.recipientId)
      return answer
    },

    /** `POST /admin/orders/{id}/cancel` (manage_orders): refunds the buyer. */
    cancelOrderAsStaff: (actor: Actor, orderId: string, reason: string | undefined) => changeOrder(actor, orderId, (row) => mayActOn(row, actor), (tx, row) => cancelAsStaff(tx, actor, row, reason)),

    /**
     * `POST /orders/{id}/deliver`: the seller of an order in progress. The files are stored first
     * (storage is never written inside a transaction), then recorded with the delivery and the
     * move in one transaction under the order's lock; their bytes are deleted if it fails.
     */
    async deliverOrder(actor: Actor, orderId: string, message: string, files: StagedFile[]) {
      const text = message.trim()
      const deliverMove = (row: OrderRow) => allowedMoves(row, actor).find((move) => move.viaDeliver)
      const current = await createOrdersRepository(db).findById(orderId)
      if (!current || !mayView(current, actor)) throw notFound('Order')
      if (!deliverMove(current)) throw invalidTransition(current.status, 'delivered', allowedMoves(current, actor))
      const stored = await uploads.storeFiles(actor, files, deliverySlot(orderId), 'files')
      try {
        return await changeOrder(
          actor,
          orderId,
          (row) => mayView(row, actor),
          async (tx, row) => {
            const move = deliverMove(row)
            if (!move) throw invalidTransition(row.status, 'delivered', allowedMoves(row, actor))
            const recorded = await uploads.recordFiles(tx, stored)
            const now = clock.now()
            const delivery = await createOrdersRepository(tx).insertDelivery({ id: newId(), orderId, message: text, fileIds: recorded.map((file) => file.id), createdAt: now })
            await applyMove(tx, row, move, actor.id)
            // Each delivery, a redelivery too, restarts the auto-complete clock.
            const updated = await createOrdersRepository(tx).update(orderId, { deliveredAt: now, autoCompleteAt: new Date(now.getTime() + autoCompleteAfterMs) })
            await emitEvent(outbox, tx, ordersEvents.orderDelivered, { ...parties(row), deliveryId: delivery.id }, now)
            return updated
          },
        )
      } catch (error) {
        await uploads.discardFiles(stored)
        throw error
      }
    },

    /**
     * The worker's periodic task: completes delivered orders whose auto-complete time has passed,
     * each in its own transaction under its row lock (rows other workers hold are skipped), so
     * several workers complete each order exactly once. Returns how many it completed.
     */
    async completeDueOrders(limit = 100): Promise<number> {
      let completed = 0
      while (completed < limit && (await completeOneDue())) completed++
      return completed
    },

    /** For reviews: the order under a row lock, in the caller's transaction. */
    lockOrder: (tx: Tx, orderId: string) => createOrdersRepository(tx).lockById(orderId),

    /** For statistics: a seller's orders counted by status. */
    sellerOrderCounts: (executor: Executor, sellerId: string) => createOrdersRepository(executor).countBySellerAndStatus(sellerId),

    /** The orders section of `GET /admin/stats`: counters kept by a trigger on orders (migration 0016). */
    statistics: defineStats('orders', OrdersStats, async (executor) => {
      const counters = await readCounters(executor, 'orders')
      const byStatus = Object.fromEntries(orderStatuses.map((status) => [status, counters.get(status) ?? 0])) as Record<OrderStatus, number>
      return { total: Object.values(byStatus).reduce((sum, count) => sum + count, 0), byStatus, grossVolume: fromCents(counters.get('gross_volume_cents') ?? 0) }
    }),
  }
}

export type OrdersService = ReturnType<typeof createOrdersService>
