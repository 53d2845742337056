import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError } from '../../lib/errors.ts'
import { fromCents, toCents } from '../../lib/money.ts'
import { escapeHtml } from '../../lib/text.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { escrowLeftCents, feeOnCents } from './order-money.ts'
import { queueResolvedEmails } from './order-resolution-emails.ts'
import { mayActOn, parties, type OrderMoves } from './order-moves.service.ts'
import { allowedMoves } from './order-status.ts'
import { invalidTransition } from './orders.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { createOrdersRepository } from './orders.repository.ts'
import type { OrderRow } from './orders.table.ts'

/** How a split resolution divides what an order still holds in escrow, in cents; the seller's side pays the fee on it at the order's own rate. */
function splitOf(row: Pick<OrderRow, 'totalCents' | 'platformFeeCents' | 'placementFeeCents' | 'refundedCents'>, refundCents: number) {
  const rest = escrowLeftCents(row) - refundCents
  const feeCents = feeOnCents(row, rest)
  return { refundCents, sellerCents: rest - feeCents, feeCents, to: rest > 0 ? ('completed' as const) : ('cancelled' as const) }
}

export interface ResolutionDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  ledger: Pick<LedgerService, 'transfer' | 'creditEarning'>
  catalogue: Pick<CatalogueService, 'recordCompletedOrder'>
  audit: Pick<AuditService, 'record'>
  users: Pick<UsersService, 'findAccountById'>
  notifications: Pick<NotificationsService, 'emailWanted'>
  moves: OrderMoves
}

const money = (cents: number) => fromCents(cents).toFixed(2)

/** Split dispute outcomes: staff divide a disputed order's escrow between the buyer and the seller. */
export function createOrderResolution(deps: ResolutionDeps) {
  const { db, clock, outbox, mailer, ledger, catalogue, audit, users, moves } = deps

  /** The money, status, timeline, audit record, event and e-mails of one split, in the caller's transaction under the order's lock. */
  async function applySplit(tx: Tx, actor: Actor, row: OrderRow, refundAmount: number, note: string): Promise<OrderRow> {
    const move = allowedMoves(row, actor).find((candidate) => candidate.action === 'resolve_split')
    if (!move) throw invalidTransition(row.status, 'completed', allowedMoves(row, actor))
    const refundCents = toCents(refundAmount)
    if (refundCents === undefined || refundCents < 0) throw fieldError('refundAmount', 'must be a number from 0 with at most two decimals')
    if (refundCents > escrowLeftCents(row)) throw fieldError('refundAmount', `must be at most ${money(escrowLeftCents(row))}, what the order holds in escrow`)
    const split = splitOf(row, refundCents)
    const now = clock.now()
    const escrow = { userId: row.buyerId, kind: 'escrow' } as const
    const about = { orderId: row.id }
    if (split.refundCents > 0) await ledger.transfer(tx, { from: escrow, to: { userId: row.buyerId, kind: 'available' }, amountCents: split.refundCents, type: 'order_refund', description: `Dispute refund: ${row.serviceTitle}`, ...about })
    if (split.sellerCents > 0) await ledger.creditEarning(tx, { from: escrow, sellerId: row.sellerId, amountCents: split.sellerCents, type: 'order_earning', description: `Dispute earning: ${row.serviceTitle}`, ...about })
    if (split.feeCents > 0) await ledger.transfer(tx, { from: escrow, to: { platform: 'revenue' }, amountCents: split.feeCents, type: 'order_earning', description: `Platform fee: ${row.serviceTitle}`, ...about })
    if (split.to === 'completed' && row.serviceId !== null) await catalogue.recordCompletedOrder(tx, row.serviceId)

    const to = split.to
    const timeline = [...row.timeline, { action: 'resolve_split' as const, status: to, by: 'staff' as const, reason: note, at: now.toISOString() }]
    const updated = await createOrdersRepository(tx).update(row.id, {
      status: to,
      statusReason: note,
      // The answer's figures follow the money: the seller's earning is the total less both (partial refunds accepted before count as refunded).
      refundedCents: row.refundedCents + split.refundCents,
      platformFeeCents: split.feeCents,
      timeline,
      updatedAt: now,
      autoCompleteAt: null,
      ...(to === 'completed' ? { completedAt: now } : { cancelledAt: now }),
    })
    const amounts = { refundAmount: fromCents(split.refundCents), sellerAmount: fromCents(split.sellerCents), fee: fromCents(split.feeCents) }
    await audit.record(tx, {
      action: 'dispute.resolve_split',
      actor,
      targetType: 'order',
      targetId: row.id,
      reason: note,
      before: { status: row.status, total: fromCents(row.totalCents), escrow: fromCents(escrowLeftCents(row)) },
      after: { status: to, ...amounts },
    })
    await emitEvent(outbox, tx, ordersEvents.orderStatusChanged, { ...parties(row), from: row.status, to, by: actor.id }, now)
    await emitEvent(outbox, tx, ordersEvents.orderResolved, { ...parties(row), status: to, ...amounts, by: actor.id }, now)
    await queueResolvedEmails(outbox, tx, row, split, note)
    return updated
  }

  return {
    /** `POST /admin/orders/{id}/resolve` (resolve_disputes, checked by the route). */
    resolveSplit: (actor: Actor, orderId: string, body: { refundAmount: number; note: string }) =>
      moves.changeOrder(actor, orderId, (row) => mayActOn(row, actor), (tx, row) => applySplit(tx, actor, row, body.refundAmount, body.note.trim())),

    /** The e-mail job: each party learns what they receive and why; skipped for an account no longer active, or one that switched these e-mails off. */
    async sendResolvedEmail(job: { orderId: string; recipientId: string; refundCents: number; sellerCents: number; note: string }): Promise<void> {
      const [order, recipient] = await Promise.all([createOrdersRepository(db).findById(job.orderId), users.findAccountById(db, job.recipientId)])
      if (!order || !recipient?.isActive) return
      if (!(await deps.notifications.emailWanted(db, recipient.id, 'order.resolved'))) return
      const buyer = recipient.id === order.buyerId
      const yours = buyer ? job.refundCents : job.sellerCents
      const what =
        yours === 0
          ? buyer ? 'the order is completed and its escrow paid to the seller' : 'the whole escrow went back to the buyer'
          : buyer ? `${money(yours)} was refunded to your wallet` : `${money(yours)} was paid to your wallet`
      const link = `${deps.appUrl}/orders/${order.id}`
      const note = job.note === '' ? { text: '', html: '' } : { text: `The decision:\n${job.note}\n\n`, html: `<p>The decision:</p><blockquote>${escapeHtml(job.note)}</blockquote>` }
      await mailer.send({
        to: recipient.email,
        subject: `Dispute resolved: ${order.serviceTitle}`,
        text: `The dispute about "${order.serviceTitle}" is resolved: ${what}.\n\n${note.text}The order: ${link}\n`,
        html: `<p>The dispute about “${escapeHtml(order.serviceTitle)}” is resolved: ${escapeHtml(what)}.</p>${note.html}<p><a href="${escapeHtml(link)}">The order</a></p>`,
      })
    },
  }
}
