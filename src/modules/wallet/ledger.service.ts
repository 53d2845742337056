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

  async function resolve(tx: Tx, ref: AccountRef): Promise<string> {
    const ledger = createLedgerRepository(tx)
    if ('platform' in ref) {
      const account = await ledger.findPlatformAccount(ref.platform)
      if (!account) throw new Error(`the platform ${ref.platform} account is missing (migrations not applied?)`)
      return account.id
    }
    const existing = await ledger.findUserAccount(ref.userId, ref.kind)
    if (existing) return existing.id
    await ensureUserAccounts(tx, ref.userId)
    return (await ledger.findUserAccount(ref.userId, ref.kind))!.id
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
      const [fromId, toId] = [await resolve(tx, transfer.from), await resolve(tx, transfer.to)]
      if (fromId === toId) throw new Error(`a transfer needs two accounts (${describeRef(transfer.from)} twice)`)
      const ledger = createLedgerRepository(tx)
      const locked = await ledger.lockByIds([fromId, toId])
      const source = locked.find((account) => account.id === fromId)!
      if (source.ownerId !== null && source.balanceCents < transfer.amountCents) throw insufficientFunds(source.balanceCents, transfer.amountCents)
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
      const fromBalance = await ledger.addToBalance(fromId, -transfer.amountCents)
      const toBalance = await ledger.addToBalance(toId, transfer.amountCents)
      await ledger.insertEntries([
        { id: newId(), transactionId, accountId: fromId, amountCents: -transfer.amountCents, balanceAfterCents: fromBalance, createdAt: now },
        { id: newId(), transactionId, accountId: toId, amountCents: transfer.amountCents, balanceAfterCents: toBalance, createdAt: now },
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
