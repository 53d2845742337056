import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, forbidden, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { StagedFile } from '../../platform/files.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { MessageRow, MessagingService } from '../messaging/messaging.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import { mayView } from './order-answers.service.ts'
import { mayActOn, parties, type OrderMoves } from './order-moves.service.ts'
import { allowedMoves, decide, type OrderStatus } from './order-status.ts'
import { invalidTransition } from './orders.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { createOrdersRepository } from './orders.repository.ts'
import type { OrderRow } from './orders.table.ts'

export interface ProgressDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  messaging: Pick<MessagingService, 'isOnline' | 'writeOrderNote' | 'publishMessage'>
  uploads: Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles'>
  moves: OrderMoves
  autoCompleteAfterMs: number
}

const deliverySlot = (orderId: string) => ({ objectType: 'order', objectId: orderId, tag: 'order_delivery' }) as const

/** What a party or staff do to an order after it is placed: the status route, staff cancels, deliveries. */
export function createOrderProgress(deps: ProgressDeps) {
  const { db, clock, outbox, messaging, uploads, moves, autoCompleteAfterMs } = deps

  return {
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
      const answer = await moves.changeOrder(
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
          if (move.by === 'staff') return move.permission === 'manage_orders' ? moves.cancelAsStaff(tx, actor, row, reason) : moves.resolveDispute(tx, actor, row, to as 'completed' | 'cancelled', reason)
          const updated = await moves.applyMove(tx, row, move, actor.id, reason)
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
    cancelOrderAsStaff: (actor: Actor, orderId: string, reason: string | undefined) =>
      moves.changeOrder(actor, orderId, (row) => mayActOn(row, actor), (tx, row) => moves.cancelAsStaff(tx, actor, row, reason)),

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
        return await moves.changeOrder(
          actor,
          orderId,
          (row) => mayView(row, actor),
          async (tx, row) => {
            const move = deliverMove(row)
            if (!move) throw invalidTransition(row.status, 'delivered', allowedMoves(row, actor))
            const recorded = await uploads.recordFiles(tx, stored)
            const now = clock.now()
            const delivery = await createOrdersRepository(tx).insertDelivery({ id: newId(), orderId, message: text, fileIds: recorded.map((file) => file.id), createdAt: now })
            await moves.applyMove(tx, row, move, actor.id)
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
  }
}
