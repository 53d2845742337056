import type { Executor, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { createLedgerRepository } from './ledger.repository.ts'
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

export interface LedgerCheck {
  ok: boolean
  transactions: number
  accounts: number
  problems: { kind: 'unbalanced_transaction' | 'balance_mismatch'; id: string; message: string }[]
}

const describeRef = (ref: AccountRef) => ('platform' in ref ? `platform ${ref.platform}` : `${ref.kind} of user ${ref.userId}`)

/**
 * The double-entry ledger (DESIGN 6). Every movement is one transaction whose entries sum to
 * zero, written in the caller's transaction together with the balances it changes, under row
 * locks taken in id order. Entries are only ever inserted.
 */
export function createLedgerService(deps: { clock: Clock }) {
  const { clock } = deps

  const keyOf = (ref: AccountRef) => ('platform' in ref ? { ownerId: null, kind: ref.platform } : { ownerId: ref.userId, kind: ref.kind })
  const isAccount = (row: LedgerAccountRow, ref: AccountRef) => row.ownerId === keyOf(ref).ownerId && row.kind === keyOf(ref).kind

  /** Finds and locks both accounts in one round trip, opening a user's accounts on first use. */
  async function lockPair(tx: Tx, from: AccountRef, to: AccountRef): Promise<[LedgerAccountRow, LedgerAccountRow]> {
    const ledger = createLedgerRepository(tx)
    let locked = await ledger.lockAccounts([keyOf(from), keyOf(to)])
    const missing = [from, to].filter((ref) => !locked.some((row) => isAccount(row, ref)))
    if (missing.length > 0) {
      for (const ref of missing) {
        if ('platform' in ref) throw new Error(`the platform ${ref.platform} account is missing (migrations not applied?)`)
        await ensureUserAccounts(tx, ref.userId)
      }
      locked = await ledger.lockAccounts([keyOf(from), keyOf(to)])
    }
    return [locked.find((row) => isAccount(row, from))!, locked.find((row) => isAccount(row, to))!]
  }

  async function ensureUserAccounts(tx: Tx, userId: string): Promise<void> {
    const now = clock.now()
    await createLedgerRepository(tx).ensureUserAccounts(userAccountKinds.map((kind) => ({ id: newId(), ownerId: userId, kind, balanceCents: 0, createdAt: now })))
  }

  return {
    /**
     * Moves `amountCents` from one account to another in the caller's transaction. A user's
     * account that would go below zero refuses with 422 INSUFFICIENT_FUNDS and nothing moves
     * (the caller's transaction rolls back); the database's CHECK is the second line.
     */
    async transfer(tx: Tx, transfer: Transfer): Promise<{ transactionId: string }> {
      if (!Number.isSafeInteger(transfer.amountCents) || transfer.amountCents <= 0) throw new Error(`a transfer moves a positive whole number of cents (got ${transfer.amountCents})`)
      const [source, target] = await lockPair(tx, transfer.from, transfer.to)
      if (source.id === target.id) throw new Error(`a transfer needs two accounts (${describeRef(transfer.from)} twice)`)
      if (source.ownerId !== null && source.balanceCents < transfer.amountCents) throw insufficientFunds(source.balanceCents, transfer.amountCents)
      const ledger = createLedgerRepository(tx)
      const now = clock.now()
      const transactionId = newId()
      await ledger.insertTransaction({
        id: transactionId,
        type: transfer.type,
        description: transfer.description,
        orderId: transfer.orderId ?? null,
        payoutId: transfer.payoutId ?? null,
        depositId: transfer.depositId ?? null,
        createdAt: now,
      })
      const balances = await ledger.moveBalance(source.id, target.id, transfer.amountCents)
      await ledger.insertEntries([
        { id: newId(), transactionId, accountId: source.id, amountCents: -transfer.amountCents, balanceAfterCents: balances.get(source.id)!, createdAt: now },
        { id: newId(), transactionId, accountId: target.id, amountCents: transfer.amountCents, balanceAfterCents: balances.get(target.id)!, createdAt: now },
      ])
      return { transactionId }
    },

    /** A user's balances in cents; accounts not opened yet count as zero. */
    async balancesOf(executor: Executor, userId: string): Promise<Record<UserAccountKind, number>> {
      const accounts: LedgerAccountRow[] = await createLedgerRepository(executor).findUserAccounts(userId)
      const balances = { available: 0, escrow: 0, payout_pending: 0 }
      for (const account of accounts) balances[account.kind as UserAccountKind] = account.balanceCents
      return balances
    },

    /** A page of one user account's entries, newest first (empty when the account was never opened). */
    async statementOf(executor: Executor, userId: string, kind: UserAccountKind, offset: number, limit: number) {
      const ledger = createLedgerRepository(executor)
      const account = await ledger.findUserAccount(userId, kind)
      return account ? ledger.statement(account.id, offset, limit) : { rows: [], total: 0 }
    },

    /** Reconciliation: every transaction sums to zero and every balance equals the sum of its entries. */
    async check(executor: Executor): Promise<LedgerCheck> {
      const ledger = createLedgerRepository(executor)
      const [unbalanced, drifting, counts] = await Promise.all([ledger.unbalancedTransactions(), ledger.driftingAccounts(), ledger.counts()])
      const problems: LedgerCheck['problems'] = [
        ...unbalanced.map((row) => ({
          kind: 'unbalanced_transaction' as const,
          id: row.id,
          message: row.entries < 2 ? `has ${row.entries} entries` : `its entries sum to ${row.sum} cents, not 0`,
        })),
        ...drifting.map((row) => ({ kind: 'balance_mismatch' as const, id: row.id, message: `balance ${row.balance} cents, entries sum to ${row.sum} cents` })),
      ]
      return { ok: problems.length === 0, ...counts, problems }
    },
  }
}

export type LedgerService = ReturnType<typeof createLedgerService>
