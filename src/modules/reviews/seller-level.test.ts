import { describe, expect, it } from 'vitest'
import { rankedSellerLevels, type LevelThresholds, type RankedSellerLevel } from '../../config.ts'
import { DAY } from '../../lib/clock.ts'
import type { SellerPerformance } from '../orders/orders.module.ts'
import { decideLevel, figuresOf, levelFor, type SellerFigures, type SellerRecord } from './seller-level.ts'

/** Thresholds that rise at every level on every criterion, so that missing one by a hair drops exactly one level. */
const RISING: Record<RankedSellerLevel, LevelThresholds> = {
  level_one: { accountDays: 10, completedOrders: 2, rating: 4, onTimePercent: 80, completionPercent: 80 },
  level_two: { accountDays: 20, completedOrders: 4, rating: 4.5, onTimePercent: 90, completionPercent: 90 },
  top_rated: { accountDays: 30, completedOrders: 6, rating: 4.8, onTimePercent: 95, completionPercent: 95 },
}

/** The smallest step each criterion is read in: a day's fraction, one order, two decimals. */
const HAIR: Record<keyof SellerFigures, number> = { accountDays: 0.001, completedOrders: 1, rating: 0.01, onTimePercent: 0.01, completionPercent: 0.01 }
const criteria = Object.keys(HAIR) as (keyof SellerFigures)[]
const round = (value: number) => Math.round(value * 1000) / 1000

describe('levelFor: the highest level whose every threshold is met', () => {
  for (const [index, level] of rankedSellerLevels.entries()) {
    const below = index === 0 ? 'new' : rankedSellerLevels[index - 1]!
    for (const criterion of criteria) {
      it(`${level}, ${criterion}: just below is ${below}, at and just above is ${level}`, () => {
        const at: SellerFigures = { ...RISING[level] }
        expect(levelFor({ ...at, [criterion]: round(at[criterion] - HAIR[criterion]) }, RISING)).toBe(below)
        expect(levelFor(at, RISING)).toBe(level)
        expect(levelFor({ ...at, [criterion]: round(at[criterion] + HAIR[criterion]) }, RISING)).toBe(level)
      })
    }
  }

  it('is new without any figure, and top_rated far above every threshold', () => {
    expect(levelFor({ accountDays: 0, completedOrders: 0, rating: 0, onTimePercent: 0, completionPercent: 0 }, RISING)).toBe('new')
    expect(levelFor({ accountDays: 1000, completedOrders: 1000, rating: 5, onTimePercent: 100, completionPercent: 100 }, RISING)).toBe('top_rated')
  })

  it('with equal thresholds on a criterion (the default rating of level_one and level_two), missing it skips both', () => {
    const equalRating = { ...RISING, level_two: { ...RISING.level_two, rating: 4 } }
    expect(levelFor({ ...RISING.level_two, rating: 3.99 }, equalRating)).toBe('new')
    expect(levelFor({ ...RISING.level_two, rating: 4 }, equalRating)).toBe('level_two')
  })
})

const figures = (completed: number, cancelled: number, delivered: number, onTime: number) => ({ completed, cancelled, delivered, onTime })
const NOW = new Date('2026-06-01T12:00:00Z')
const record = (performance: Partial<SellerPerformance>, ratings: Partial<SellerRecord['ratings']> = {}, ageDays = 100): SellerRecord => ({
  createdAt: new Date(NOW.getTime() - ageDays * DAY),
  performance: { lifetime: figures(0, 0, 0, 0), recent: figures(0, 0, 0, 0), disputed: 0, ...performance },
  ratings: { lifetime: { count: 0, sum: 0 }, recent: { count: 0, sum: 0 }, ...ratings },
})

describe('figuresOf: a seller’s record as the levels read it', () => {
  it('reads the recent span, the lifetime count of completed orders, and the account age in days', () => {
    const read = figuresOf(record({ lifetime: figures(40, 10, 45, 30), recent: figures(9, 1, 8, 6) }, { lifetime: { count: 40, sum: 160 }, recent: { count: 3, sum: 14 } }, 60.5), NOW)
    expect(read).toEqual({ accountDays: 60.5, completedOrders: 40, rating: 4.67, onTimePercent: 75, completionPercent: 90 })
  })

  it('falls back to the lifetime figure where the recent span has no data (a seller who paused)', () => {
    const read = figuresOf(record({ lifetime: figures(12, 3, 12, 11) }, { lifetime: { count: 8, sum: 38 } }), NOW)
    expect(read).toMatchObject({ rating: 4.75, onTimePercent: 91.67, completionPercent: 80 })
  })

  it('reads every rate as 0 for a seller without orders or ratings', () => {
    expect(figuresOf(record({}), NOW)).toMatchObject({ completedOrders: 0, rating: 0, onTimePercent: 0, completionPercent: 0 })
  })

  it('with the disputes won, counts each order in dispute as completed and delivered on time', () => {
    const withDispute = record({ lifetime: figures(10, 0, 10, 8), recent: figures(4, 0, 4, 3), disputed: 1 })
    expect(figuresOf(withDispute, NOW)).toMatchObject({ completedOrders: 10, onTimePercent: 75, completionPercent: 100 })
    expect(figuresOf(withDispute, NOW, true)).toMatchObject({ completedOrders: 11, onTimePercent: 80, completionPercent: 100 })
  })
})

describe('decideLevel: rises, falls, disputes and suspensions', () => {
  const ratings = { lifetime: { count: 10, sum: 50 }, recent: { count: 5, sum: 25 } }
  /** level_one everywhere except on-time delivery: `onTime` of the 10 recent deliveries, and `disputed` orders in dispute. */
  const levelOneBut = (onTime: number, disputed: number) => record({ lifetime: figures(10, 0, 10, onTime), recent: figures(10, 0, 10, onTime), disputed }, ratings, 15)

  it('rises to what the settled orders earn; an order in dispute never helps a seller rise', () => {
    expect(decideLevel('new', levelOneBut(8, 0), NOW, RISING, false)).toBe('level_one')
    expect(decideLevel('new', levelOneBut(7, 0), NOW, RISING, false)).toBe('new')
    expect(decideLevel('new', levelOneBut(7, 3), NOW, RISING, false)).toBe('new')
  })

  it('falls when the settled orders miss the level', () => {
    expect(decideLevel('level_one', levelOneBut(7, 0), NOW, RISING, false)).toBe('new')
    expect(decideLevel('top_rated', levelOneBut(8, 0), NOW, RISING, false)).toBe('level_one')
  })

  it('does not fall when the orders in dispute, won, would keep the level', () => {
    // 7 of 10 on time is 70 %, under level_one's 80 %; with the dispute won, 8 of 11 is 72.73 %: still under, so the fall stands.
    expect(decideLevel('level_one', levelOneBut(7, 1), NOW, RISING, false)).toBe('new')
    // 7 of 10 with three disputes won is 10 of 13, 76.92 %; with four, 11 of 14, 78.57 %; with five, 12 of 15, 80 %: kept.
    expect(decideLevel('level_one', levelOneBut(7, 4), NOW, RISING, false)).toBe('new')
    expect(decideLevel('level_one', levelOneBut(7, 5), NOW, RISING, false)).toBe('level_one')
  })

  it('falls only as far as it would with every dispute won', () => {
    const levelTwoWithDisputesWon = record({ lifetime: figures(5, 0, 5, 4), recent: figures(5, 0, 5, 4), disputed: 5 }, ratings, 25)
    expect(figuresOf(levelTwoWithDisputesWon, NOW, true)).toMatchObject({ completedOrders: 10, onTimePercent: 90, completionPercent: 100 })
    expect(decideLevel('top_rated', levelTwoWithDisputesWon, NOW, RISING, false)).toBe('level_two')
    expect(decideLevel('level_two', levelTwoWithDisputesWon, NOW, RISING, false)).toBe('level_two')
  })

  it('puts a suspended seller at new whatever the record', () => {
    const excellent = record({ lifetime: figures(100, 0, 100, 100), recent: figures(10, 0, 10, 10) }, ratings, 400)
    expect(decideLevel('top_rated', excellent, NOW, RISING, false)).toBe('top_rated')
    expect(decideLevel('top_rated', excellent, NOW, RISING, true)).toBe('new')
  })
})
