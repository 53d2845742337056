import { can, type Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { mayView, sellerEarningCents, type OrderAnswers } from './order-answers.service.ts'
import { escrowLeftCents } from './order-money.ts'
import { queueResolvedEmails } from './order-resolution-emails.ts'
import { createRequestSettling, expireOpenRequest } from './order-request-rules.ts'
import { allowedMoves, systemMove, type OrderStatus, type Transition } from './order-status.ts'
import { invalidTransition } from './orders.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { createOrdersRepository } from './orders.repository.ts'
import type { OrderRow } from './orders.table.ts'

export interface MovesDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  ledger: Pick<LedgerService, 'transfer' | 'creditEarning'>
  catalogue: Pick<CatalogueService, 'recordCompletedOrder'>
  audit: Pick<AuditService, 'record'>
  answers: Pick<OrderAnswers, 'describe'>
}

/** The ids an order's events carry. */
export const parties = (row: Pick<OrderRow, 'id' | 'serviceId' | 'buyerId' | 'sellerId'>) => ({ orderId: row.id, serviceId: row.serviceId, buyerId: row.buyerId, sellerId: row.sellerId })

/** Staff with any order permission reach an order through the status route; the permission of the move decides then (403). */
export const mayActOn = (row: OrderRow, actor: Actor) => mayView(row, actor) || can(actor, 'manage_orders') || can(actor, 'resolve_disputes')

/**
 * Applies one decided move to a locked order: its effect on dates and revisions, its money, its
 * events. The single place where an order changes status; it ends the order's open request as
 * `expired` (a request accepted is closed before its move, so it is no longer open here).
 */
function createMoveApplier(deps: Pick<MovesDeps, 'clock' | 'outbox' | 'ledger' | 'catalogue'>) {
  const { clock, outbox, ledger, catalogue } = deps
  return async function applyMove(tx: Tx, row: OrderRow, move: Transition, by: string, reason?: string): Promise<OrderRow> {
    const now = clock.now()
    // The row is locked, so the timeline read with it is the latest: appending here loses no move.
    const timeline = [...row.timeline, { action: move.action, status: move.to, by: move.by, reason: reason ?? null, at: now.toISOString() }]
    const patch: Partial<OrderRow> = { status: move.to, updatedAt: now, statusReason: reason ?? null, timeline }
    const buyerEscrow = { userId: row.buyerId, kind: 'escrow' } as const
    await expireOpenRequest(outbox, tx, row, now)
    if (move.action === 'accept') patch.dueAt = new Date(now.getTime() + row.deliveryDays * DAY)
    if (move.action === 'request_revision') {
      patch.revisionsLeft = row.revisionsLeft === null ? null : row.revisionsLeft - 1
      patch.autoCompleteAt = null
    }
    if (move.to === 'disputed') patch.autoCompleteAt = null
    if (move.to === 'completed') {
      const earning = sellerEarningCents(row)
      if (earning > 0) await ledger.creditEarning(tx, { from: buyerEscrow, sellerId: row.sellerId, amountCents: earning, type: 'order_earning', description: `Earning: ${row.serviceTitle}`, orderId: row.id })
      if (row.platformFeeCents > 0) await ledger.transfer(tx, { from: buyerEscrow, to: { platform: 'revenue' }, amountCents: row.platformFeeCents, type: 'order_earning', description: `Platform fee: ${row.serviceTitle}`, orderId: row.id })
      if (row.serviceId !== null) await catalogue.recordCompletedOrder(tx, row.serviceId)
      Object.assign(patch, { completedAt: now, autoCompleteAt: null })
    }
    if (move.to === 'cancelled') {
      await ledger.transfer(tx, { from: buyerEscrow, to: { userId: row.buyerId, kind: 'available' }, amountCents: escrowLeftCents(row), type: 'order_refund', description: `Refund: ${row.serviceTitle}`, orderId: row.id })
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
}

/**
 * The moves of the state machine in `order-status.ts` applied to a locked order: their dates,
 * money and events, the staff moves with their audit records, and auto-completion.
 */
export function createOrderMoves(deps: MovesDeps) {
  const { db, clock, audit, answers } = deps
  const applyMove = createMoveApplier(deps)
  const settleOverdue = createRequestSettling({ ...deps, applyMove })

  const staffMove = (row: OrderRow, actor: Actor, to: OrderStatus): Transition | undefined =>
    allowedMoves(row, actor).find((move) => move.by === 'staff' && move.to === to)

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

  /** Completes one due order, if any is left that no other worker holds; false when there is none. An overdue request is settled first (a cancellation accepted wins). */
  const completeOneDue = () =>
    db.transaction(async (tx) => {
      const [row] = await createOrdersRepository(tx).lockDueForAutoComplete(clock.now(), 1)
      if (!row) return false
      const current = (await settleOverdue(tx, row)) ?? row
      if (current.status === 'delivered') await applyMove(tx, current, systemMove('delivered', 'completed')!, 'system')
      return true
    })

  /**
   * Runs `work` on the order under its row lock (404 when `visible` refuses it). An overdue
   * request of the order is settled first, as the worker would, in a transaction of its own that
   * commits whatever `work` then decides; `work` then runs on what it left.
   */
  async function underOrderLock<T>(orderId: string, visible: (row: OrderRow) => boolean, work: (tx: Tx, row: OrderRow) => Promise<T>): Promise<T> {
    for (;;) {
      const outcome = await db.transaction(async (tx) => {
        const current = await createOrdersRepository(tx).lockById(orderId)
        if (!current || !visible(current)) throw notFound('Order')
        if (await settleOverdue(tx, current)) return { settled: true as const }
        return { settled: false as const, value: await work(tx, current) }
      })
      if (!outcome.settled) return outcome.value
    }
  }

  return {
    applyMove,
    settleOverdue,
    underOrderLock,

    /**
     * Staff cancel an order (manage_orders), from the status route or `POST /admin/orders/{id}/cancel`.
     * Every staff cancel passes here, and is recorded in the audit log in its transaction.
     */
    async cancelAsStaff(tx: Tx, actor: Actor, row: OrderRow, reason: string | undefined): Promise<OrderRow> {
      const move = staffMove(row, actor, 'cancelled')
      if (!move || move.permission !== 'manage_orders') {
        if (!can(actor, 'manage_orders')) throw forbidden('Requires the manage_orders permission')
        throw invalidTransition(row.status, 'cancelled', allowedMoves(row, actor))
      }
      const updated = await applyMove(tx, row, move, actor.id, reason)
      await recordStaffMove(tx, 'order.cancel', actor, row, updated, reason)
      return updated
    },

    /**
     * Staff resolve a dispute to completed or cancelled (resolve_disputes). Every resolution passes
     * here, and is recorded in the audit log in its transaction.
     */
    async resolveDispute(tx: Tx, actor: Actor, row: OrderRow, to: 'completed' | 'cancelled', reason: string | undefined): Promise<OrderRow> {
      const move = staffMove(row, actor, to)
      if (!move || move.permission !== 'resolve_disputes') {
        if (!can(actor, 'resolve_disputes')) throw forbidden('Requires the resolve_disputes permission')
        throw invalidTransition(row.status, to, allowedMoves(row, actor))
      }
      const updated = await applyMove(tx, row, move, actor.id, reason)
      await recordStaffMove(tx, 'dispute.resolve', actor, row, updated, reason)
      const amounts = to === 'completed' ? { refundCents: 0, sellerCents: sellerEarningCents(row) } : { refundCents: escrowLeftCents(row), sellerCents: 0 }
      await queueResolvedEmails(deps.outbox, tx, row, amounts, reason)
      return updated
    },

    /** Locks an order the actor may act on (404 otherwise; an overdue request settled first), runs `change`, and answers it as the actor sees it. */
    async changeOrder(actor: Actor, orderId: string, visible: (row: OrderRow) => boolean, change: (tx: Tx, row: OrderRow) => Promise<OrderRow>) {
      return answers.describe(db, await underOrderLock(orderId, visible, change), actor)
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
  }
}

export type OrderMoves = ReturnType<typeof createOrderMoves>
