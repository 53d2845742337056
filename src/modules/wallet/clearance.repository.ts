import { and, asc, eq, inArray, isNull, lte, min, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { clearances, type ClearanceRow } from './clearance.table.ts'
import { ledgerAccounts, ledgerTransactions } from './ledger.table.ts'

/** What is left of an earning that is clearing. */
const remainingSql = sql<number>`${clearances.amountCents} - ${clearances.reversedCents}`

export function createClearanceRepository(db: Executor) {
  return {
    async insert(row: typeof clearances.$inferInsert): Promise<void> {
      await db.insert(clearances).values(row)
    },

    /**
     * Earnings still clearing whose time has come, oldest first, locked; rows another worker (or a
     * staff refund) holds are skipped, so several workers share the work and clear each once.
     */
    lockDue(now: Date, limit: number): Promise<ClearanceRow[]> {
      return db
        .select()
        .from(clearances)
        .where(and(isNull(clearances.settledAt), lte(clearances.availableAt, now)))
        .orderBy(asc(clearances.availableAt), asc(clearances.id))
        .limit(limit)
        .for('update', { skipLocked: true })
    },

    /** The earnings of an order still clearing to `userId`, locked, in the order they were credited. */
    lockOpenOfOrder(orderId: string, userId: string): Promise<ClearanceRow[]> {
      return db
        .select()
        .from(clearances)
        .where(and(eq(clearances.orderId, orderId), eq(clearances.userId, userId), isNull(clearances.settledAt)))
        .orderBy(asc(clearances.createdAt), asc(clearances.id))
        .for('update')
    },

    async update(id: string, patch: Partial<Pick<ClearanceRow, 'reversedCents' | 'settledAt' | 'clearanceTransactionId'>>): Promise<void> {
      await db.update(clearances).set(patch).where(eq(clearances.id, id))
    },

    /** The description of the transaction that credited an earning, for the line that clears it. */
    async descriptionOf(transactionId: string): Promise<string> {
      const [row] = await db.select({ description: ledgerTransactions.description }).from(ledgerTransactions).where(eq(ledgerTransactions.id, transactionId))
      return row?.description ?? ''
    },

    /** When the user's next earning becomes available; null when none is clearing. */
    async nextAvailableAt(userId: string): Promise<Date | null> {
      const [row] = await db
        .select({ next: min(clearances.availableAt) })
        .from(clearances)
        .where(and(eq(clearances.userId, userId), isNull(clearances.settledAt)))
      return row?.next ?? null
    },

    /** Which of these orders have an earning still clearing. */
    async ordersStillClearing(orderIds: string[]): Promise<string[]> {
      if (orderIds.length === 0) return []
      const rows = await db
        .selectDistinct({ orderId: clearances.orderId })
        .from(clearances)
        .where(and(inArray(clearances.orderId, orderIds), isNull(clearances.settledAt)))
      return rows.map((row) => row.orderId)
    },

    /** Clearing accounts whose balance differs from what their user's unsettled earnings have left. */
    driftingClearingAccounts(): Promise<{ id: string; balance: number; open: number }[]> {
      const open = sql<number>`coalesce(sum(${remainingSql}), 0)::bigint`
      return db
        .select({ id: ledgerAccounts.id, balance: ledgerAccounts.balanceCents, open: open.mapWith(Number) })
        .from(ledgerAccounts)
        .leftJoin(clearances, and(eq(clearances.userId, ledgerAccounts.ownerId), isNull(clearances.settledAt)))
        .where(eq(ledgerAccounts.kind, 'clearing'))
        .groupBy(ledgerAccounts.id)
        .having(sql`${ledgerAccounts.balanceCents} <> ${open}`)
    },
  }
}
