import { rankedSellerLevels, type LevelThresholds, type RankedSellerLevel } from '../../config.ts'
import { DAY } from '../../lib/clock.ts'
import type { OrderFigures, SellerPerformance } from '../orders/orders.module.ts'
import type { SellerLevel } from '../users/users.module.ts'
import type { RatingTotals } from './ratings.repository.ts'

/** A seller's record as the levels read it (docs/seller-levels.md). Rates in percent and the rating with two decimals, as profiles show them. */
export interface SellerFigures {
  accountDays: number
  completedOrders: number
  rating: number
  onTimePercent: number
  completionPercent: number
}

/** What the figures are made of: the account's age, its orders (lifetime and recent) and its public ratings from buyers (lifetime and recent). */
export interface SellerRecord {
  createdAt: Date
  performance: SellerPerformance
  ratings: { lifetime: RatingTotals; recent: RatingTotals }
}

const twoDecimals = (value: number) => Math.round(value * 100) / 100
const percentOf = (part: number, whole: number) => (whole === 0 ? 0 : twoDecimals((part / whole) * 100))

/** The recent figure when the recent span has any data, else the lifetime one: a seller who paused is judged on what they did. */
const recentOrLifetime = (recent: { part: number; whole: number }, lifetime: { part: number; whole: number }) =>
  recent.whole > 0 ? percentOf(recent.part, recent.whole) : percentOf(lifetime.part, lifetime.whole)

/** Every order in dispute counted as completed and delivered on time: the best the disputes can end for the seller. */
function withDisputesWon(figures: OrderFigures, disputed: number): OrderFigures {
  return { completed: figures.completed + disputed, cancelled: figures.cancelled, delivered: figures.delivered + disputed, onTime: figures.onTime + disputed }
}

/**
 * The figures of a record at `now`. Orders in dispute count in none of them (`settled`), or, with
 * `disputesWon`, each as completed and delivered on time.
 */
export function figuresOf(record: SellerRecord, now: Date, disputesWon = false): SellerFigures {
  const { performance, ratings } = record
  const lifetime = disputesWon ? withDisputesWon(performance.lifetime, performance.disputed) : performance.lifetime
  const recent = disputesWon ? withDisputesWon(performance.recent, performance.disputed) : performance.recent
  const averageOf = (totals: RatingTotals) => (totals.count === 0 ? 0 : twoDecimals(totals.sum / totals.count))
  return {
    accountDays: (now.getTime() - record.createdAt.getTime()) / DAY,
    completedOrders: lifetime.completed,
    rating: ratings.recent.count > 0 ? averageOf(ratings.recent) : averageOf(ratings.lifetime),
    onTimePercent: recentOrLifetime({ part: recent.onTime, whole: recent.delivered }, { part: lifetime.onTime, whole: lifetime.delivered }),
    completionPercent: recentOrLifetime(
      { part: recent.completed, whole: recent.completed + recent.cancelled },
      { part: lifetime.completed, whole: lifetime.completed + lifetime.cancelled },
    ),
  }
}

const meets = (figures: SellerFigures, needs: LevelThresholds): boolean =>
  figures.accountDays >= needs.accountDays &&
  figures.completedOrders >= needs.completedOrders &&
  figures.rating >= needs.rating &&
  figures.onTimePercent >= needs.onTimePercent &&
  figures.completionPercent >= needs.completionPercent

/** The highest level whose every threshold the figures meet, else `new`. */
export function levelFor(figures: SellerFigures, thresholds: Record<RankedSellerLevel, LevelThresholds>): SellerLevel {
  return [...rankedSellerLevels].reverse().find((level) => meets(figures, thresholds[level])) ?? 'new'
}

const rankOf = (level: SellerLevel) => (level === 'new' ? 0 : rankedSellerLevels.indexOf(level) + 1)

/**
 * The level a seller holds after an evaluation. A suspended seller is `new`. A seller rises to
 * what the settled orders earn; a fall happens only as far as it would with every order in
 * dispute won, so no open dispute ever lowers a level.
 */
export function decideLevel(current: SellerLevel, record: SellerRecord, now: Date, thresholds: Record<RankedSellerLevel, LevelThresholds>, suspended: boolean): SellerLevel {
  if (suspended) return 'new'
  const earned = levelFor(figuresOf(record, now), thresholds)
  if (rankOf(earned) >= rankOf(current) || record.performance.disputed === 0) return earned
  const kept = levelFor(figuresOf(record, now, true), thresholds)
  return rankOf(kept) >= rankOf(current) ? current : kept
}
