import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { basisPointsOfCents, fromCents, toCents } from '../../lib/money.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { mayView, type OrderAnswers } from './order-answers.service.ts'
import { alreadyTipped, notTippable, tipWindowClosed } from './order-tips.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { createOrdersRepository } from './orders.repository.ts'

/** A tip's bounds, in cents. */
export const TIP_MIN_CENTS = 100
export const TIP_MAX_CENTS = 100_000

/**
 * Tips (docs/offers.md): the buyer of a completed order thanks the seller once, within the
 * window after completion. The tip is paid and earned like an order, in one transaction under the
 * order's row lock: `tip` moves it from the buyer's available balance into their escrow, and
 * `tip_earning` moves it on to the seller (an earning: it clears first) and the platform's fee (TIP_FEE_PERCENT)
 * to revenue, so the escrow is where it was and the statements read as for an order.
 */
export function createOrderTips(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  ledger: Pick<LedgerService, 'transfer' | 'creditEarning'>
  answers: Pick<OrderAnswers, 'describe'>
  tipWindowMs: number
  feeBasisPoints: number
}) {
  const { db, clock, outbox, ledger, answers, tipWindowMs, feeBasisPoints } = deps

  return {
    /** `POST /orders/{orderId}/tip`: anyone but the parties and order staff gets 404. */
    async tipOrder(actor: Actor, orderId: string, amount: number) {
      const amountCents = toCents(amount)
      if (amountCents === undefined || amountCents < TIP_MIN_CENTS || amountCents > TIP_MAX_CENTS) throw fieldError('amount', 'must be a number from 1.00 to 1000.00 with at most two decimals')
      const row = await db.transaction(async (tx) => {
        const orders = createOrdersRepository(tx)
        const order = await orders.lockById(orderId)
        if (!order || !mayView(order, actor)) throw notFound('Order')
        if (order.buyerId !== actor.id) throw notTippable('Only the buyer of an order tips its seller')
        if (order.status !== 'completed' || order.completedAt === null) throw notTippable(`A ${order.status} order cannot be tipped: only a completed one`)
        if (order.tipCents !== null) throw alreadyTipped()
        const now = clock.now()
        if (now.getTime() >= order.completedAt.getTime() + tipWindowMs) throw tipWindowClosed(Math.round((tipWindowMs / DAY) * 1000) / 1000)
        const feeCents = basisPointsOfCents(amountCents, feeBasisPoints)
        const earningCents = amountCents - feeCents
        const buyerEscrow = { userId: order.buyerId, kind: 'escrow' } as const
        await ledger.transfer(tx, { from: { userId: order.buyerId, kind: 'available' }, to: buyerEscrow, amountCents, type: 'tip', description: `Tip: ${order.serviceTitle}`, orderId: order.id })
        if (earningCents > 0) await ledger.creditEarning(tx, { from: buyerEscrow, sellerId: order.sellerId, amountCents: earningCents, type: 'tip_earning', description: `Tip: ${order.serviceTitle}`, orderId: order.id })
        if (feeCents > 0) await ledger.transfer(tx, { from: buyerEscrow, to: { platform: 'revenue' }, amountCents: feeCents, type: 'tip_earning', description: `Platform fee on a tip: ${order.serviceTitle}`, orderId: order.id })
        const updated = await orders.update(order.id, { tipCents: amountCents, tippedAt: now, updatedAt: now })
        await emitEvent(
          outbox,
          tx,
          ordersEvents.orderTipped,
          { orderId: order.id, serviceId: order.serviceId, buyerId: order.buyerId, sellerId: order.sellerId, amount: fromCents(amountCents), fee: fromCents(feeCents), sellerEarning: fromCents(earningCents) },
          now,
        )
        return updated
      })
      return answers.describe(db, row, actor)
    },
  }
}
