import { randomInt } from 'node:crypto'
import type { Executor, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { createClearanceRepository } from './clearance.repository.ts'
import { createEarnings } from './clearance.service.ts'
import { createLedgerRepository, transferCall, transferOutcomeOf, transferValues, type AccountKey, type TransferColumns, type TransferRecord, type TransferValues } from './ledger.repository.ts'
import { userAccountKinds, type LedgerAccountRow, type LedgerTransactionType, type PlatformAccountKind, type UserAccountKind } from './ledger.table.ts'
import { insufficientFunds } from './wallet.errors.ts'

/** An account of the ledger: one of a user's, or one of the platform's. */
export type AccountRef = { userId: string; kind: UserAccountKind } | { platform: PlatformAccountKind }

export interface Transfer {
  from: AccountRef
  to: AccountRef
  /** Integer cents, more than zero. */
  amountCents: number
  type: LedgerTransactionType
  description: string
  orderId?: string
  payoutId?: string
  depositId?: string
}

/**
 * A transfer whose statement prices it: the amount and the description are SQL of the statement
 * (`transferSqlWith`), and its row answers the amount as `amount_cents`.
 */
export type StatementPricedTransfer = Omit<Transfer, 'amountCents' | 'description'>

const isPriced = (transfer: Transfer | StatementPricedTransfer): transfer is Transfer => 'amountCents' in transfer

export interface LedgerCheck {
  ok: boolean
  transactions: number
  accounts: number
  problems: { kind: 'unbalanced_transaction' | 'balance_mismatch' | 'clearing_mismatch'; id: string; message: string }[]
}

const describeRef = (ref: AccountRef) => ('platform' in ref ? `platform ${ref.platform}` : `${ref.kind} of user ${ref.userId}`)

/**
 * Reconciliation: every transaction sums to zero, every balance equals the sum of its entries,
 * and every clearing balance equals what its user's earnings still clearing have left.
 */
async function checkBooks(executor: Executor): Promise<LedgerCheck> {
  const ledger = createLedgerRepository(executor)
  const [unbalanced, drifting, clearing, counts] = await Promise.all([
    ledger.unbalancedTransactions(),
    ledger.driftingAccounts(),
    createClearanceRepository(executor).driftingClearingAccounts(),
    ledger.counts(),
  ])
  const problems: LedgerCheck['problems'] = [
    ...unbalanced.map((row) => ({
      kind: 'unbalanced_transaction' as const,
      id: row.id,
      message: row.entries < 2 ? `has ${row.entries} entries` : `its entries sum to ${row.sum} cents, not 0`,
    })),
    ...drifting.map((row) => ({ kind: 'balance_mismatch' as const, id: row.id, message: `balance ${row.balance} cents, entries sum to ${row.sum} cents` })),
    ...clearing.map((row) => ({ kind: 'clearing_mismatch' as const, id: row.id, message: `clearing balance ${row.balance} cents, earnings still clearing hold ${row.open} cents` })),
  ]
  return { ok: problems.length === 0, ...counts, problems }
}

/**
 * The double-entry ledger (decision 0021). Every movement is one transaction whose entries sum to
 * zero, written in the caller's transaction together with the balances it changes, under row
 * locks taken in id order. Entries are only ever inserted. A platform side of a transaction uses
 * one of its account's `platformSubAccounts` rows (decision 0186). A seller's earnings land in
 * `clearing` for `clearanceAfterMs` first, unless it is 0 (decision 0195).
 */
export function createLedgerService(deps: { clock: Clock; platformSubAccounts: number; clearanceAfterMs: number }) {
  const { clock } = deps
  const subAccounts = deps.platformSubAccounts
  // Each transaction takes the next sub-account in turn, from a random start: concurrent
  // transactions of one instance spread evenly, and instances do not start in step.
  let nextSubAccount = randomInt(subAccounts)
  const takeSubAccount = () => {
    const taken = nextSubAccount
    nextSubAccount = (nextSubAccount + 1) % subAccounts
    return taken
  }

  const keyOf = (ref: AccountRef): AccountKey => ('platform' in ref ? { ownerId: null, kind: ref.platform } : { ownerId: ref.userId, kind: ref.kind })

  async function ensureUserAccounts(executor: Executor, userId: string): Promise<void> {
    const now = clock.now()
    await createLedgerRepository(executor).ensureUserAccounts(userAccountKinds.map((kind) => ({ id: newId(), ownerId: userId, kind, balanceCents: 0, createdAt: now })))
  }

  function recordOf(transfer: Transfer | StatementPricedTransfer): TransferRecord {
    if (isPriced(transfer) && (!Number.isSafeInteger(transfer.amountCents) || transfer.amountCents <= 0)) throw new Error(`a transfer moves a positive whole number of cents (got ${transfer.amountCents})`)
    const from = keyOf(transfer.from)
    const to = keyOf(transfer.to)
    if (from.ownerId === to.ownerId && from.kind === to.kind) throw new Error(`a transfer needs two accounts (${describeRef(transfer.from)} twice)`)
    return {
      from,
      to,
      amountCents: isPriced(transfer) ? transfer.amountCents : null,
      transactionId: newId(),
      sourceEntryId: newId(),
      targetEntryId: newId(),
      type: transfer.type,
      description: isPriced(transfer) ? transfer.description : null,
      orderId: transfer.orderId ?? null,
      payoutId: transfer.payoutId ?? null,
      depositId: transfer.depositId ?? null,
      createdAt: clock.now(),
      platformSubAccount: takeSubAccount(),
    }
  }

  /**
   * Runs a statement that includes the transfer (`ledger_transfer`, its placeholders filled by the
   * values `run` receives): a user's accounts open on their first movement (the platform's come
   * with the migrations), and a user's balance that does not cover the amount refuses with 422
   * INSUFFICIENT_FUNDS, having moved nothing (the database's CHECK is the second line). `run`
   * answers the transfer's columns of its statement's row, or throws for reasons of its own.
   */
  async function book(executor: Executor, transfer: Transfer | StatementPricedTransfer, run: (values: TransferValues) => Promise<TransferColumns | undefined>): Promise<{ transactionId: string; createdAt: Date }> {
    const record = recordOf(transfer)
    const values = transferValues(record)
    let outcome = transferOutcomeOf(await run(values))
    if (!outcome.accountsFound) {
      for (const ref of [transfer.from, transfer.to]) if (!('platform' in ref)) await ensureUserAccounts(executor, ref.userId)
      outcome = transferOutcomeOf(await run(values))
      if (!outcome.accountsFound) throw new Error(`an account of ${describeRef(transfer.from)} -> ${describeRef(transfer.to)} is missing (migrations not applied?)`)
    }
    if (!outcome.moved) throw insufficientFunds(outcome.sourceBalanceCents, isPriced(transfer) ? transfer.amountCents : outcome.amountCents!)
    return { transactionId: record.transactionId, createdAt: record.createdAt }
  }

  /** Moves `amountCents` from one account to another in the caller's transaction (see `book`). */
  async function transfer(tx: Tx, movement: Transfer): Promise<{ transactionId: string }> {
    const { transactionId } = await book(tx, movement, (values) => createLedgerRepository(tx).recordTransfer(values))
    return { transactionId }
  }

  return {
    transfer,
    ...createEarnings({ clock, clearanceAfterMs: deps.clearanceAfterMs, transfer }),
    book,
    /** For another module's one-statement writes: the call of `ledger_transfer` with the statement's own amount and description (a `StatementPricedTransfer`), whose columns `book` reads. */
    transferSqlWith: transferCall,

    /** A user's balances in cents; accounts not opened yet count as zero. */
    async balancesOf(executor: Executor, userId: string): Promise<Record<UserAccountKind, number>> {
      const accounts: LedgerAccountRow[] = await createLedgerRepository(executor).findUserAccounts(userId)
      const balances = { available: 0, escrow: 0, payout_pending: 0, clearing: 0 }
      for (const account of accounts) balances[account.kind as UserAccountKind] = account.balanceCents
      return balances
    },

    /** A page of the entries of some of a user's accounts, newest first (empty when none was ever opened). */
    async statementOf(executor: Executor, userId: string, kinds: UserAccountKind[], offset: number, limit: number) {
      const ledger = createLedgerRepository(executor)
      const accounts = await ledger.findUserAccountsOf(userId, kinds)
      return accounts.length > 0 ? ledger.statement(accounts.map((account) => account.id), offset, limit) : { rows: [], total: 0 }
    },

    /** When the user's next clearing earning becomes available; null when none is clearing. */
    nextClearingAt: (executor: Executor, userId: string) => createClearanceRepository(executor).nextAvailableAt(userId),

    /** Reconciliation (see `checkBooks`). */
    check: checkBooks,
  }
}

export type LedgerService = ReturnType<typeof createLedgerService>
