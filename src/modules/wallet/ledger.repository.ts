import { and, asc, count, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { ledgerAccounts, ledgerEntries, ledgerTransactions, type AccountKind, type LedgerAccountRow, type UserAccountKind } from './ledger.table.ts'

export function createLedgerRepository(db: Executor) {
  return {
    /** Creates the user's accounts that do not exist yet (concurrent callers are fine: conflicts are skipped). */
    async ensureUserAccounts(rows: (typeof ledgerAccounts.$inferInsert)[]): Promise<void> {
      await db.insert(ledgerAccounts).values(rows).onConflictDoNothing()
    },

    async platformBalance(kind: 'revenue' | 'external'): Promise<number> {
      const [row] = await db
        .select({ balanceCents: ledgerAccounts.balanceCents })
        .from(ledgerAccounts)
        .where(and(isNull(ledgerAccounts.ownerId), eq(ledgerAccounts.kind, kind)))
      return row?.balanceCents ?? 0
    },

    findUserAccounts(userId: string): Promise<LedgerAccountRow[]> {
      return db.select().from(ledgerAccounts).where(eq(ledgerAccounts.ownerId, userId))
    },

    async findUserAccount(userId: string, kind: UserAccountKind): Promise<LedgerAccountRow | undefined> {
      const [row] = await db
        .select()
        .from(ledgerAccounts)
        .where(and(eq(ledgerAccounts.ownerId, userId), eq(ledgerAccounts.kind, kind)))
      return row
    },

    /**
     * Finds and locks the accounts of the given owners and kinds (owner null: the platform's) in
     * one round trip, in id order, so two transfers over the same pair of accounts cannot deadlock.
     */
    lockAccounts(refs: { ownerId: string | null; kind: AccountKind }[]): Promise<LedgerAccountRow[]> {
      const matches = refs.map((ref) => and(ref.ownerId === null ? isNull(ledgerAccounts.ownerId) : eq(ledgerAccounts.ownerId, ref.ownerId), eq(ledgerAccounts.kind, ref.kind)))
      return db
        .select()
        .from(ledgerAccounts)
        .where(or(...matches))
        .orderBy(asc(ledgerAccounts.id))
        .for('update')
    },

    /** Moves `amountCents` from one account's balance to the other's in one statement; the new balances by id. */
    async moveBalance(fromId: string, toId: string, amountCents: number): Promise<Map<string, number>> {
      const rows = await db
        .update(ledgerAccounts)
        .set({ balanceCents: sql`${ledgerAccounts.balanceCents} + case when ${ledgerAccounts.id} = ${fromId} then ${-amountCents}::bigint else ${amountCents}::bigint end` })
        .where(inArray(ledgerAccounts.id, [fromId, toId]))
        .returning({ id: ledgerAccounts.id, balanceCents: ledgerAccounts.balanceCents })
      return new Map(rows.map((row) => [row.id, row.balanceCents]))
    },

    async insertTransaction(row: typeof ledgerTransactions.$inferInsert): Promise<void> {
      await db.insert(ledgerTransactions).values(row)
    },

    async insertEntries(rows: (typeof ledgerEntries.$inferInsert)[]): Promise<void> {
      await db.insert(ledgerEntries).values(rows)
    },

    /** One account's entries with their transaction, newest first. */
    async statement(accountId: string, offset: number, limit: number) {
      const [rows, [counted]] = await Promise.all([
        db
          .select({
            id: ledgerEntries.id,
            amountCents: ledgerEntries.amountCents,
            balanceAfterCents: ledgerEntries.balanceAfterCents,
            createdAt: ledgerEntries.createdAt,
            type: ledgerTransactions.type,
            description: ledgerTransactions.description,
            orderId: ledgerTransactions.orderId,
            payoutId: ledgerTransactions.payoutId,
          })
          .from(ledgerEntries)
          .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerEntries.transactionId))
          .where(eq(ledgerEntries.accountId, accountId))
          .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.id))
          .offset(offset)
          .limit(limit),
        db.select({ total: count() }).from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId)),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Transactions whose entries do not sum to zero, or that have fewer than two entries. */
    unbalancedTransactions(): Promise<{ id: string; sum: number; entries: number }[]> {
      return db
        .select({ id: ledgerTransactions.id, sum: sql<number>`coalesce(sum(${ledgerEntries.amountCents}), 0)::bigint`.mapWith(Number), entries: sql<number>`count(${ledgerEntries.id})::int`.mapWith(Number) })
        .from(ledgerTransactions)
        .leftJoin(ledgerEntries, eq(ledgerEntries.transactionId, ledgerTransactions.id))
        .groupBy(ledgerTransactions.id)
        .having(sql`coalesce(sum(${ledgerEntries.amountCents}), 0) <> 0 or count(${ledgerEntries.id}) < 2`)
    },

    /** Accounts whose balance differs from the sum of their entries. */
    driftingAccounts(): Promise<{ id: string; balance: number; sum: number }[]> {
      return db
        .select({ id: ledgerAccounts.id, balance: ledgerAccounts.balanceCents, sum: sql<number>`coalesce(sum(${ledgerEntries.amountCents}), 0)::bigint`.mapWith(Number) })
        .from(ledgerAccounts)
        .leftJoin(ledgerEntries, eq(ledgerEntries.accountId, ledgerAccounts.id))
        .groupBy(ledgerAccounts.id)
        .having(sql`${ledgerAccounts.balanceCents} <> coalesce(sum(${ledgerEntries.amountCents}), 0)`)
    },

    async counts(): Promise<{ transactions: number; accounts: number }> {
      const [[transactions], [accounts]] = await Promise.all([
        db.select({ total: count() }).from(ledgerTransactions),
        db.select({ total: count() }).from(ledgerAccounts),
      ])
      return { transactions: transactions?.total ?? 0, accounts: accounts?.total ?? 0 }
    },
  }
}

export type LedgerRepository = ReturnType<typeof createLedgerRepository>
