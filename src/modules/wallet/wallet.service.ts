import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fail, fieldError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { fromCents, toCents } from '../../lib/money.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { defineStats, readCounters } from '../../platform/statistics/statistics.ts'
import { createDepositsRepository } from './deposits.repository.ts'
import { createLedgerRepository } from './ledger.repository.ts'
import { createPayoutsRepository } from './payouts.repository.ts'
import { WalletStats } from './wallet.schemas.ts'
import type { DepositRow } from './deposits.table.ts'
import { statementAccountKinds, type StatementAccountKind } from './ledger.table.ts'
import type { LedgerService } from './ledger.service.ts'
import type { PaymentsProvider } from './payments.ts'
import { walletErrors } from './wallet.errors.ts'

/** Deposit limits: from 0.50 to 10,000.00 a deposit. */
export const DEPOSIT_MIN_CENTS = 50
export const DEPOSIT_MAX_CENTS = 1_000_000

const toDeposit = (row: DepositRow) => ({
  id: row.id,
  amount: fromCents(row.amountCents),
  currency: row.currency,
  status: row.status,
  failureReason: row.failureReason,
  createdAt: row.createdAt.toISOString(),
  completedAt: row.completedAt?.toISOString() ?? null,
})

/** One line of a statement, as `GET /wallet/transactions` answers it. */
const statementLine = (row: Awaited<ReturnType<LedgerService['statementOf']>>['rows'][number]) => ({
  id: row.id,
  type: row.type,
  account: row.account as StatementAccountKind,
  amount: fromCents(row.amountCents),
  balanceAfter: fromCents(row.balanceAfterCents),
  description: row.description,
  orderId: row.orderId,
  payoutId: row.payoutId,
  availableAt: row.availableAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
})

/** The balances `GET /wallet` answers. */
async function balancesOf(ledger: LedgerService, executor: Executor, userId: string, currency: string) {
  const [cents, next] = await Promise.all([ledger.balancesOf(executor, userId), ledger.nextClearingAt(executor, userId)])
  const { available, escrow, payout_pending: pending, clearing } = cents
  return { balance: fromCents(available), escrow: fromCents(escrow), pendingPayouts: fromCents(pending), clearing: fromCents(clearing), nextClearingAt: next?.toISOString() ?? null, currency }
}

type StatementRequest = PageRequest & { account?: StatementAccountKind }

/** The entries of a user's available and clearing balances (or of one of them), newest first (decision 0196). */
async function statement(ledger: LedgerService, executor: Executor, userId: string, query: StatementRequest) {
  const { rows, total } = await ledger.statementOf(executor, userId, query.account ? [query.account] : [...statementAccountKinds], offsetOf(query), query.limit)
  return toPage(rows.map(statementLine), total, query)
}

/** What a user sees of their money: balances, a statement, deposits. */
export function createWalletService(deps: {
  db: Db
  clock: Clock
  ledger: LedgerService
  payments: PaymentsProvider
  currency: string
  users: Pick<UsersService, 'findAccountById'>
  audit: Pick<AuditService, 'record'>
}) {
  const { db, clock, ledger, payments, currency, users, audit } = deps

  const balances = (executor: Executor, userId: string) => balancesOf(ledger, executor, userId, currency)

  return {
    /** `GET /wallet`. */
    getWallet: (actor: Actor) => balances(db, actor.id),

    /** `GET /admin/wallets/{userId}` (view_accounts). */
    async walletOf(userId: string) {
      if (!(await users.findAccountById(db, userId))) throw notFound('User')
      return { userId, ...(await balances(db, userId)) }
    },

    /** `POST /admin/wallets/{userId}/adjustments` (superuser): a correction booked against the platform's external account. */
    async adjust(actor: Actor, userId: string, amount: number, reason: string) {
      const amountCents = toCents(amount)
      if (amountCents === undefined || amountCents === 0) throw fieldError('amount', 'must be a non-zero amount with at most two decimals')
      return db.transaction(async (tx) => {
        if (!(await users.findAccountById(tx, userId))) throw notFound('User')
        const user = { userId, kind: 'available' } as const
        const external = { platform: 'external' } as const
        const description = `Adjustment by staff: ${reason.trim()}`
        if (amountCents > 0) await ledger.transfer(tx, { from: external, to: user, amountCents, type: 'adjustment', description })
        else await ledger.transfer(tx, { from: user, to: external, amountCents: -amountCents, type: 'adjustment', description })
        const before = await balances(tx, userId)
        await audit.record(tx, {
          action: 'wallet.adjust',
          actor,
          targetType: 'user',
          targetId: userId,
          reason: reason.trim(),
          before: { balance: fromCents(toCents(before.balance)! - amountCents) },
          after: { balance: before.balance, amount: fromCents(amountCents) },
        })
        return { userId, ...before }
      })
    },

    /**
     * The wallet section of `GET /admin/stats`: the platform's revenue account, money held in
     * escrow and earnings clearing (trigger-kept counters of those balances) and the pending
     * payout queue.
     */
    statistics: defineStats('wallet', WalletStats, async (executor) => {
      const [revenueCents, counters, pending] = await Promise.all([
        createLedgerRepository(executor).platformBalance('revenue'),
        readCounters(executor, 'wallet'),
        createPayoutsRepository(executor).pendingTotals(),
      ])
      return {
        platformRevenue: fromCents(revenueCents),
        escrowHeld: fromCents(counters.get('escrow_held') ?? 0),
        clearingHeld: fromCents(counters.get('clearing_held') ?? 0),
        payoutsPending: { count: pending.count, amount: fromCents(pending.amountCents) },
        currency,
      }
    }),

    /** `GET /wallet/transactions`: the caller's statement. */
    listTransactions: (actor: Actor, query: StatementRequest) => statement(ledger, db, actor.id, query),

    /** `GET /admin/wallets/{userId}/transactions` (view_accounts): a user's statement as they see it (decision 0220). */
    async statementOf(userId: string, query: StatementRequest) {
      if (!(await users.findAccountById(db, userId))) throw notFound('User')
      return statement(ledger, db, userId, query)
    },

    /**
     * `POST /wallet/deposits`: records the deposit, asks the provider to collect it (never inside
     * a transaction: a real provider is a network call), then credits it in one transaction with
     * its ledger entries when the provider says it succeeded.
     */
    async deposit(actor: Actor, amount: number) {
      const amountCents = toCents(amount)
      if (amountCents === undefined) throw fieldError('amount', 'must have at most two decimals')
      if (amountCents < DEPOSIT_MIN_CENTS || amountCents > DEPOSIT_MAX_CENTS) throw fieldError('amount', 'must be from 0.50 to 10000.00')
      if (!payments.isAvailable) throw fail(walletErrors.DEPOSITS_UNAVAILABLE, 'Deposits are not available on this deployment')
      const id = newId()
      await db.transaction((tx) =>
        createDepositsRepository(tx).insert({ id, userId: actor.id, amountCents, currency, provider: payments.name, status: 'pending', createdAt: clock.now() }),
      )
      const outcome = await payments.collect({ depositId: id, userId: actor.id, amountCents, currency })
      const row = await db.transaction(async (tx) => {
        const deposits = createDepositsRepository(tx)
        if (outcome.status === 'pending') return deposits.update(id, { providerReference: outcome.reference })
        if (outcome.status === 'failed') return deposits.update(id, { status: 'failed', failureReason: outcome.reason, completedAt: clock.now() })
        await ledger.transfer(tx, { from: { platform: 'external' }, to: { userId: actor.id, kind: 'available' }, amountCents, type: 'deposit', description: `Deposit via ${payments.name}`, depositId: id })
        return deposits.update(id, { status: 'succeeded', providerReference: outcome.reference, completedAt: clock.now() })
      })
      return toDeposit(row)
    },
  }
}

export type WalletService = ReturnType<typeof createWalletService>
