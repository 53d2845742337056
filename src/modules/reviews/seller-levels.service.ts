import type { Config } from '../../config.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { OrdersService, SellerPerformance } from '../orders/orders.module.ts'
import type { SellerLevel, UsersService } from '../users/users.module.ts'
import { reviewsEvents } from './reviews.events.ts'
import { createRatingsRepository } from './ratings.repository.ts'
import { decideLevel, type SellerRecord } from './seller-level.ts'

export interface LevelChange {
  userId: string
  from: SellerLevel
  to: SellerLevel
}

export interface SellerLevelsDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  settings: Config['sellerLevels']
  orders: Pick<OrdersService, 'sellerPerformance'>
  users: Pick<UsersService, 'accountsForLevelEvaluation' | 'markLevelsEvaluated' | 'lockAccount' | 'recordSellerLevel'>
}

type Candidate = Awaited<ReturnType<UsersService['accountsForLevelEvaluation']>>[number]

const NO_ORDERS: SellerPerformance = { lifetime: { completed: 0, cancelled: 0, delivered: 0, onTime: 0 }, recent: { completed: 0, cancelled: 0, delivered: 0, onTime: 0 }, disputed: 0 }
const NO_RATINGS = { count: 0, sum: 0 }

/**
 * The seller level evaluation (docs/seller-levels.md): accounts in batches by id, each batch's
 * figures in a few grouped queries, and each change of level in its own transaction under the
 * account's row lock, so a change is recorded and announced once however many workers run.
 */
export function createSellerLevels(deps: SellerLevelsDeps) {
  const { db, clock, outbox, settings, orders, users } = deps

  /** Applies a level in its own transaction; the level is decided again on the locked row (a suspension, or another worker, may have come first). */
  const applyLevel = (userId: string, record: SellerRecord, now: Date) =>
    db.transaction(async (tx): Promise<LevelChange | undefined> => {
      const account = await users.lockAccount(tx, userId)
      if (!account) return undefined
      const to = decideLevel(account.sellerLevel, record, now, settings.thresholds, account.suspendedAt !== null)
      await users.recordSellerLevel(tx, userId, to, now)
      if (to === account.sellerLevel) return undefined
      await emitEvent(outbox, tx, reviewsEvents.sellerLevelChanged, { userId, from: account.sellerLevel, to }, now)
      return { userId, from: account.sellerLevel, to }
    })

  /** One batch: the figures of every seller in it, then the changes. Accounts that never sold and hold no level are no sellers: left alone. */
  async function evaluateBatch(accounts: Candidate[], now: Date): Promise<{ evaluated: number; changes: LevelChange[] }> {
    const ids = accounts.map((account) => account.id)
    const since = new Date(now.getTime() - settings.windowMs)
    const ratings = createRatingsRepository(db)
    const [performances, lifetime, recent] = await Promise.all([orders.sellerPerformance(db, ids, since), ratings.sellerTotalsOf(ids), ratings.recentSellerTotalsOf(ids, since)])
    const unchanged: string[] = []
    const changes: LevelChange[] = []
    let evaluated = 0
    for (const account of accounts) {
      const performance = performances.get(account.id)
      if (!performance && account.sellerLevel === 'new') continue
      evaluated++
      const record: SellerRecord = {
        createdAt: account.createdAt,
        performance: performance ?? NO_ORDERS,
        ratings: { lifetime: lifetime.get(account.id) ?? NO_RATINGS, recent: recent.get(account.id) ?? NO_RATINGS },
      }
      if (decideLevel(account.sellerLevel, record, now, settings.thresholds, account.suspendedAt !== null) === account.sellerLevel) {
        unchanged.push(account.id)
        continue
      }
      const change = await applyLevel(account.id, record, now)
      if (change) changes.push(change)
    }
    await users.markLevelsEvaluated(db, unchanged, now)
    return { evaluated, changes }
  }

  return {
    /**
     * Evaluates every seller's level, `batchSize` accounts at a time; returns how many sellers were
     * evaluated and the changes. With `skipEvaluatedWithinMs`, sellers evaluated that recently are
     * left out (the worker's run, so that several workers do not each evaluate everyone).
     */
    async evaluateSellerLevels(options: { batchSize?: number; skipEvaluatedWithinMs?: number } = {}): Promise<{ evaluated: number; changes: LevelChange[] }> {
      const batchSize = options.batchSize ?? 200
      const now = clock.now()
      const evaluatedBefore = options.skipEvaluatedWithinMs === undefined ? undefined : new Date(now.getTime() - options.skipEvaluatedWithinMs)
      let afterId: string | null = null
      let evaluated = 0
      const changes: LevelChange[] = []
      for (;;) {
        const accounts = await users.accountsForLevelEvaluation(db, afterId, batchSize, evaluatedBefore)
        if (accounts.length === 0) break
        const batch = await evaluateBatch(accounts, now)
        evaluated += batch.evaluated
        changes.push(...batch.changes)
        afterId = accounts[accounts.length - 1]!.id
        if (accounts.length < batchSize) break
      }
      return { evaluated, changes }
    },
  }
}
