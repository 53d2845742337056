import type { Db, Executor } from '../../db/client.ts'
import { notFound } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createRatingsRepository } from './ratings.repository.ts'

const twoDecimals = (value: number) => Math.round(value * 100) / 100
const averageOf = (sum: number, count: number) => (count === 0 ? 0 : twoDecimals(sum / count))

/**
 * Profile statistics (decision 0034): read from counters kept in the transactions
 * that change them (the public ratings, the seller's order figures, the services' figures), so a
 * profile never aggregates the reviews or the seller's orders. Ratings count from the moment their
 * review is public.
 */
export function createUserStats(deps: {
  db: Db
  catalogue: Pick<CatalogueService, 'sellerServiceFigures'>
  orders: Pick<OrdersService, 'sellerOrderFigures'>
  users: Pick<UsersService, 'findAccountById'>
}) {
  const { db, catalogue, orders, users } = deps

  async function ratingsOf(executor: Executor, userId: string) {
    const row = await createRatingsRepository(executor).sellerRatingsOf(userId)
    const count = row?.reviewsCount ?? 0
    return {
      count,
      average: averageOf(row?.ratingSum ?? 0, count),
      distribution: { 5: row?.fives ?? 0, 4: row?.fours ?? 0, 3: row?.threes ?? 0, 2: row?.twos ?? 0, 1: row?.ones ?? 0 },
    }
  }

  return {
    /** The public profile's figures: `stats` as seller, and the rating sellers gave the user as buyer. */
    async publicStatsOf(executor: Executor, userId: string) {
      const [services, figures, ratings, asBuyer] = await Promise.all([
        catalogue.sellerServiceFigures(executor, userId),
        orders.sellerOrderFigures(executor, userId),
        ratingsOf(executor, userId),
        createRatingsRepository(executor).buyerRatingsOf(userId),
      ])
      return {
        stats: { servicesCount: services.active, completedOrdersCount: figures.completed, averageRating: ratings.average, reviewsCount: ratings.count },
        buyerRating: averageOf(asBuyer.sum, asBuyer.count),
        buyerReviewsCount: asBuyer.count,
      }
    },

    /** `GET /users/{id}/stats`: an active user's extended record; 404 otherwise. */
    async statsOf(userId: string) {
      const account = await users.findAccountById(db, userId)
      if (!account?.isActive) throw notFound('User')
      const [services, figures, ratings] = await Promise.all([catalogue.sellerServiceFigures(db, userId), orders.sellerOrderFigures(db, userId), ratingsOf(db, userId)])
      const { completed, delivered, onTime } = figures
      const ended = completed + figures.cancelled
      return {
        totalServices: services.total,
        activeServices: services.active,
        averageServicePrice: fromCents(services.averageActivePriceCents),
        totalOrders: figures.orders,
        completedOrders: completed,
        completionRate: ended === 0 ? 0 : twoDecimals((completed / ended) * 100),
        onTimeDeliveryRate: delivered === 0 ? 0 : twoDecimals((onTime / delivered) * 100),
        totalReviews: ratings.count,
        averageRating: ratings.average,
        ratingDistribution: ratings.distribution,
        memberSince: account.createdAt.toISOString(),
        lastLogin: account.lastLogin?.toISOString() ?? null,
        isKYCVerified: account.isKycVerified,
        sellerLevel: account.sellerLevel,
        levelEvaluatedAt: account.levelEvaluatedAt?.toISOString() ?? null,
      }
    },
  }
}

export type UserStats = ReturnType<typeof createUserStats>
