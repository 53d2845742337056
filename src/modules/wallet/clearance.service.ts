import type { Db, Executor, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { fromCents } from '../../lib/money.ts'
import { createClearanceRepository } from './clearance.repository.ts'
import type { Transfer } from './ledger.service.ts'
import { alreadyCleared } from './wallet.errors.ts'

/** A seller's earning from an order: where it comes from, how much, and how the statement names it. */
export interface Earning extends Omit<Transfer, 'to' | 'orderId' | 'type'> {
  sellerId: string
  orderId: string
  type: 'order_earning' | 'tip_earning'
}

/** Staff give a buyer back part of what the seller of their order still has clearing from it. */
export interface ClearingRefund {
  orderId: string
  sellerId: string
  buyerId: string
  amountCents: number
  description: string
}

type TransferFn = (tx: Tx, transfer: Transfer) => Promise<{ transactionId: string }>

/**
 * Earnings and their clearance (decision 0195), for the ledger service: where an earning lands,
 * and what a staff refund takes back while it is still clearing.
 */
export function createEarnings(deps: { clock: Clock; clearanceAfterMs: number; transfer: TransferFn }) {
  const { clock, clearanceAfterMs, transfer } = deps

  return {
    /**
     * Credits a seller's earning in the caller's transaction: to their `clearing` account, recorded
     * to become available CLEARANCE_DAYS from now (the worker moves it then), or, when
     * CLEARANCE_DAYS is 0, straight to `available`. The one place that decides which.
     */
    async creditEarning(tx: Tx, earning: Earning): Promise<{ transactionId: string; availableAt: Date | null }> {
      const { sellerId, ...rest } = earning
      if (clearanceAfterMs === 0) return { ...(await transfer(tx, { ...rest, to: { userId: sellerId, kind: 'available' } })), availableAt: null }
      const { transactionId } = await transfer(tx, { ...rest, to: { userId: sellerId, kind: 'clearing' } })
      const now = clock.now()
      const availableAt = new Date(now.getTime() + clearanceAfterMs)
      await createClearanceRepository(tx).insert({ id: newId(), userId: sellerId, orderId: earning.orderId, amountCents: earning.amountCents, availableAt, creditTransactionId: transactionId, createdAt: now })
      return { transactionId, availableAt }
    },

    /**
     * Takes `amountCents` back from what the seller still has clearing from the order and gives it
     * to the buyer's available balance, in the caller's transaction (which holds the order's row
     * lock): the order's earnings are locked and shrunk oldest first (an earning left with nothing
     * is settled, so the worker never clears it), then `earning_reversal` moves the amount from the
     * seller's `clearing` to the buyer's `escrow` and `staff_refund` on to their `available`, so each
     * side's statement names its own movement. 422 ALREADY_CLEARED when nothing of the order is
     * clearing any more; 400 on `amount` above what is.
     */
    async refundClearing(tx: Tx, refund: ClearingRefund): Promise<{ clearingBeforeCents: number }> {
      const clearing = createClearanceRepository(tx)
      const open = await clearing.lockOpenOfOrder(refund.orderId, refund.sellerId)
      const left = open.reduce((sum, row) => sum + row.amountCents - row.reversedCents, 0)
      if (left === 0) throw alreadyCleared()
      if (refund.amountCents > left) throw fieldError('amount', `must be at most ${fromCents(left).toFixed(2)}, what the seller still has clearing from this order`)
      let rest = refund.amountCents
      const now = clock.now()
      for (const row of open) {
        const taken = Math.min(rest, row.amountCents - row.reversedCents)
        if (taken === 0) break
        const reversedCents = row.reversedCents + taken
        await clearing.update(row.id, { reversedCents, ...(reversedCents === row.amountCents && { settledAt: now }) })
        rest -= taken
      }
      const buyerEscrow = { userId: refund.buyerId, kind: 'escrow' } as const
      const about = { amountCents: refund.amountCents, description: refund.description, orderId: refund.orderId }
      await transfer(tx, { from: { userId: refund.sellerId, kind: 'clearing' }, to: buyerEscrow, type: 'earning_reversal', ...about })
      await transfer(tx, { from: buyerEscrow, to: { userId: refund.buyerId, kind: 'available' }, type: 'staff_refund', ...about })
      return { clearingBeforeCents: left }
    },

    /** Which of these orders still have an earning clearing (for the staff refund among an order's allowed actions). */
    async ordersStillClearing(executor: Executor, orderIds: string[]): Promise<Set<string>> {
      return new Set(await createClearanceRepository(executor).ordersStillClearing(orderIds))
    },
  }
}

/**
 * The worker's periodic task: moves each earning whose time has come from `clearing` to
 * `available`, each in its own transaction under its row lock (rows another worker or a staff
 * refund holds are skipped), as a `clearance` ledger transaction, so several workers clear each
 * earning exactly once. Returns how many it cleared.
 */
export function createClearanceWorker(deps: { db: Db; clock: Clock; transfer: TransferFn }) {
  const { db, clock, transfer } = deps

  const clearOneDue = () =>
    db.transaction(async (tx) => {
      const clearing = createClearanceRepository(tx)
      const now = clock.now()
      const [row] = await clearing.lockDue(now, 1)
      if (!row) return false
      const account = (kind: 'clearing' | 'available') => ({ userId: row.userId, kind }) as const
      const description = `Cleared: ${await clearing.descriptionOf(row.creditTransactionId)}`
      const { transactionId } = await transfer(tx, { from: account('clearing'), to: account('available'), amountCents: row.amountCents - row.reversedCents, type: 'clearance', description, orderId: row.orderId })
      await clearing.update(row.id, { settledAt: now, clearanceTransactionId: transactionId })
      return true
    })

  return {
    async clearDueEarnings(limit = 100): Promise<number> {
      let cleared = 0
      while (cleared < limit && (await clearOneDue())) cleared++
      return cleared
    },
  }
}
