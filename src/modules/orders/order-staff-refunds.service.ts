import { escapeHtml } from '../../lib/text.ts'
import { Type } from '@sinclair/typebox'
import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fail, fieldError, notFound } from '../../lib/errors.ts'
import { fromCents, toCents } from '../../lib/money.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import type { OrderAnswers } from './order-answers.service.ts'
import { mayActOn, parties } from './order-moves.service.ts'
import { ordersErrors } from './orders.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { createOrdersRepository } from './orders.repository.ts'
import type { OrderRow } from './orders.table.ts'

export const STAFF_REFUND_JOBS = {
  refundedEmail: defineJob('mail.order_staff_refund', Type.Object({ orderId: Type.String(), recipientId: Type.String(), amountCents: Type.Integer(), note: Type.String() })),
}

const money = (cents: number) => fromCents(cents).toFixed(2)

/**
 * Staff refunds of completed orders (decision 0197): while what the seller earned from an order is
 * still clearing, staff with manage_orders give part of it back to the buyer. The money, the
 * order's `refunded`, the audit record, the event and the e-mails are one transaction under the
 * order's row lock; the ledger takes the amount from the order's clearing earnings (the
 * completion's first, then the tip's), so the worker later clears only what is left.
 */
export function createOrderStaffRefunds(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  ledger: Pick<LedgerService, 'refundClearing'>
  audit: Pick<AuditService, 'record'>
  users: Pick<UsersService, 'findAccountById'>
  answers: Pick<OrderAnswers, 'describe'>
}) {
  const { db, clock, outbox, mailer, ledger, audit, users, answers } = deps

  async function applyRefund(tx: Tx, actor: Actor, row: OrderRow, amount: number, note: string): Promise<OrderRow> {
    if (row.status !== 'completed') throw fail(ordersErrors.INVALID_TRANSITION, `A ${row.status} order cannot be refunded by staff: only a completed one, while its earnings are clearing`)
    const amountCents = toCents(amount)
    if (amountCents === undefined || amountCents <= 0) throw fieldError('amount', 'must be more than 0 with at most two decimals')
    const { clearingBeforeCents } = await ledger.refundClearing(tx, { orderId: row.id, sellerId: row.sellerId, buyerId: row.buyerId, amountCents, description: `Staff refund: ${row.serviceTitle}` })
    const now = clock.now()
    const refundedCents = row.refundedCents + amountCents
    const updated = await createOrdersRepository(tx).update(row.id, { refundedCents, updatedAt: now })
    await audit.record(tx, {
      action: 'order.staff_refund',
      actor,
      targetType: 'order',
      targetId: row.id,
      reason: note,
      before: { refunded: fromCents(row.refundedCents), clearing: fromCents(clearingBeforeCents) },
      after: { refunded: fromCents(refundedCents), clearing: fromCents(clearingBeforeCents - amountCents), amount: fromCents(amountCents) },
    })
    await emitEvent(outbox, tx, ordersEvents.orderRefunded, { ...parties(row), amount: fromCents(amountCents), by: actor.id }, now)
    // One job per party, so a retry never mails the other twice.
    for (const recipientId of [row.buyerId, row.sellerId]) await outbox.add(tx, STAFF_REFUND_JOBS.refundedEmail, { orderId: row.id, recipientId, amountCents, note })
    return updated
  }

  return {
    /** `POST /admin/orders/{orderId}/refund` (manage_orders, checked by the route). */
    async refundAsStaff(actor: Actor, orderId: string, body: { amount: number; note: string }) {
      const row = await db.transaction(async (tx) => {
        const order = await createOrdersRepository(tx).lockById(orderId)
        if (!order || !mayActOn(order, actor)) throw notFound('Order')
        return applyRefund(tx, actor, order, body.amount, body.note.trim())
      })
      return answers.describe(db, row, actor)
    },

    /** The e-mail job: each party learns what moved and why; skipped for an account no longer active. */
    async sendStaffRefundEmail(job: { orderId: string; recipientId: string; amountCents: number; note: string }): Promise<void> {
      const [order, recipient] = await Promise.all([createOrdersRepository(db).findById(job.orderId), users.findAccountById(db, job.recipientId)])
      if (!order || !recipient?.isActive) return
      const what =
        recipient.id === order.buyerId
          ? `${money(job.amountCents)} was refunded to your wallet`
          : `${money(job.amountCents)} of your earnings from it, still clearing, went back to the buyer`
      const link = `${deps.appUrl}/orders/${order.id}`
      await mailer.send({
        to: recipient.email,
        subject: `Refund: ${order.serviceTitle}`,
        text: `Our team refunded part of the order "${order.serviceTitle}": ${what}.\n\nWhy:\n${job.note}\n\nThe order: ${link}\n`,
        html: `<p>Our team refunded part of the order “${escapeHtml(order.serviceTitle)}”: ${escapeHtml(what)}.</p><p>Why:</p><blockquote>${escapeHtml(job.note)}</blockquote><p><a href="${escapeHtml(link)}">The order</a></p>`,
      })
    },
  }
}

export type OrderStaffRefunds = ReturnType<typeof createOrderStaffRefunds>
