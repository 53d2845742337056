import { and, count, desc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { preparedSql } from '../../db/statements.ts'
import { clearances } from './clearance.table.ts'
import { ledgerAccounts, ledgerEntries, ledgerTransactions, type AccountKind, type LedgerAccountRow, type LedgerTransactionType, type UserAccountKind } from './ledger.table.ts'

/** One side of a transfer: a user's account (by owner and kind) or one of the platform's (by kind). */
export interface AccountKey {
  ownerId: string | null
  kind: AccountKind
}

export interface TransferRecord {
  from: AccountKey
  to: AccountKey
  /** More than zero; a user's source account must hold it, the platform's may go below zero. Null when the statement computes it. */
  amountCents: number | null
  transactionId: string
  sourceEntryId: string
  targetEntryId: string
  type: LedgerTransactionType
  /** Null when the statement computes it. */
  description: string | null
  orderId: string | null
  payoutId: string | null
  depositId: string | null
  createdAt: Date
  /** Which sub-account a platform side uses (from 0; decision 0186). */
  platformSubAccount: number
}

/** What `ledger_transfer` answered: whether both accounts exist, the source's balance before, whether money moved. */
export interface TransferOutcome {
  accountsFound: boolean
  sourceBalanceCents: number
  moved: boolean
  /** The amount a statement computed, when it did. */
  amountCents: number | undefined
}

/** The columns `ledger_transfer` answers, as the driver gives them. */
export interface TransferColumns {
  accounts_found: boolean | null
  source_balance: number | string | null
  moved: boolean | null
  /** Answered by a statement that computes the amount (`transferCall`), for the refusal's details. */
  amount_cents?: number | string | null
}

const p = (name: string) => sql.placeholder(name)

const OUTCOME_COLUMNS = ['accounts_found', 'source_balance', 'moved'] as const satisfies readonly (keyof TransferColumns)[]

/**
 * For a statement that selects `ledger_transfer`'s answer under `alias` (the call, or a CTE that
 * selected it): each column by its name in `TransferColumns`, and all three for a select list, named
 * as `transferOutcomeOf` reads them.
 */
export function transferColumnsOf(alias: string) {
  const column = (name: (typeof OUTCOME_COLUMNS)[number]) => sql`${sql.identifier(alias)}.${sql.identifier(name)}`
  return {
    moved: column('moved'),
    selected: sql.join(
      OUTCOME_COLUMNS.map((name) => sql`${column(name)} as ${sql.identifier(name)}`),
      sql`, `,
    ),
  }
}

/** The name `transferOutcomeOf` reads a statement-priced amount under. */
export const TRANSFER_AMOUNT_COLUMN = 'amount_cents' satisfies keyof TransferColumns

/**
 * The call of `ledger_transfer` (its source: ledger-transfer.sql), for statements that move money:
 * it locks both accounts in id order, checks a user's balance under the lock, moves both balances
 * and inserts the transaction with its entries, or writes nothing and says why. Every argument is
 * passed by name: fifteen arguments, several of one type, would still run with two of them
 * swapped if passed by position. Its placeholders are filled by `transferValues`; a statement
 * that shares one (`payoutId`, `createdAt`) gets the same value.
 */
export const transferCall = (computed: ComputedParts = {}) => sql`ledger_transfer(from_owner => ${p('fromOwner')}::uuid, from_kind => ${p('fromKind')}::text,
  to_owner => ${p('toOwner')}::uuid, to_kind => ${p('toKind')}::text, amount => ${computed.amountCents ?? sql`${p('amountCents')}::bigint`},
  txn_id => ${p('transactionId')}::uuid, source_entry => ${p('sourceEntryId')}::uuid, target_entry => ${p('targetEntryId')}::uuid,
  txn_type => ${p('type')}::text, txn_description => ${computed.description ?? sql`${p('description')}::text`},
  for_order => ${p('orderId')}::uuid, for_payout => ${p('payoutId')}::uuid, for_deposit => ${p('depositId')}::uuid, booked_at => ${p('createdAt')}::timestamptz,
  platform_sub_account => ${p('platformSubAccount')}::int)`

/** For a statement that prices what it moves: SQL expressions of its own for the amount and the description, in place of their placeholders. */
export interface ComputedParts {
  amountCents?: SQL
  description?: SQL
}

export const transferCallSql = transferCall()

export type TransferValues = ReturnType<typeof transferValues>

export const transferValues = (record: TransferRecord) => ({
  fromOwner: record.from.ownerId,
  fromKind: record.from.kind,
  toOwner: record.to.ownerId,
  toKind: record.to.kind,
  amountCents: record.amountCents,
  transactionId: record.transactionId,
  sourceEntryId: record.sourceEntryId,
  targetEntryId: record.targetEntryId,
  type: record.type,
  description: record.description,
  orderId: record.orderId,
  payoutId: record.payoutId,
  depositId: record.depositId,
  createdAt: record.createdAt.toISOString(),
  platformSubAccount: record.platformSubAccount,
})

export const transferOutcomeOf = (row: TransferColumns | undefined): TransferOutcome => ({
  accountsFound: row?.accounts_found === true,
  sourceBalanceCents: Number(row?.source_balance ?? 0),
  moved: row?.moved === true,
  amountCents: row?.amount_cents === undefined || row.amount_cents === null ? undefined : Number(row.amount_cents),
})

const transferStatement = preparedSql<TransferValues, TransferColumns>('ledger_transfer', sql`select accounts_found, source_balance, moved from ${transferCallSql}`)

export function createLedgerRepository(db: Executor) {
  return {
    /** Creates the user's accounts that do not exist yet (concurrent callers are fine: conflicts are skipped). */
    async ensureUserAccounts(rows: (typeof ledgerAccounts.$inferInsert)[]): Promise<void> {
      await db.insert(ledgerAccounts).values(rows).onConflictDoNothing()
    },

    /** A platform account's balance: the sum of its sub-accounts. */
    async platformBalance(kind: 'revenue' | 'external'): Promise<number> {
      const [row] = await db
        .select({ balanceCents: sql<number>`coalesce(sum(${ledgerAccounts.balanceCents}), 0)::bigint`.mapWith(Number) })
        .from(ledgerAccounts)
        .where(and(isNull(ledgerAccounts.ownerId), eq(ledgerAccounts.kind, kind)))
      return row?.balanceCents ?? 0
    },

    findUserAccounts(userId: string): Promise<LedgerAccountRow[]> {
      return db.select().from(ledgerAccounts).where(eq(ledgerAccounts.ownerId, userId))
    },

    /** The user's accounts of these kinds that are open. */
    findUserAccountsOf(userId: string, kinds: UserAccountKind[]): Promise<LedgerAccountRow[]> {
      return db
        .select()
        .from(ledgerAccounts)
        .where(and(eq(ledgerAccounts.ownerId, userId), inArray(ledgerAccounts.kind, kinds)))
    },

    /** One transfer on its own (see `transferCallSql`). */
    async recordTransfer(values: TransferValues): Promise<TransferColumns | undefined> {
      const [row] = await transferStatement(db, values)
      return row
    },

    /**
     * Some accounts' entries with their transaction, newest first; an entry that credited an
     * earning to `clearing` carries when it becomes available.
     */
    async statement(accountIds: string[], offset: number, limit: number) {
      const where = inArray(ledgerEntries.accountId, accountIds)
      const [rows, [counted]] = await Promise.all([
        db
          .select({
            id: ledgerEntries.id,
            account: ledgerAccounts.kind,
            amountCents: ledgerEntries.amountCents,
            balanceAfterCents: ledgerEntries.balanceAfterCents,
            createdAt: ledgerEntries.createdAt,
            type: ledgerTransactions.type,
            description: ledgerTransactions.description,
            orderId: ledgerTransactions.orderId,
            payoutId: ledgerTransactions.payoutId,
            availableAt: clearances.availableAt,
          })
          .from(ledgerEntries)
          .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerEntries.transactionId))
          .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
          .leftJoin(clearances, and(eq(clearances.creditTransactionId, ledgerEntries.transactionId), eq(clearances.userId, ledgerAccounts.ownerId), sql`${ledgerEntries.amountCents} > 0`))
          .where(where)
          .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.id))
          .offset(offset)
          .limit(limit),
        db.select({ total: count() }).from(ledgerEntries).where(where),
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
