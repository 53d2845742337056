import type { Db, Executor } from '../../db/client.ts'
import { notFound } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createReviewsRepository } from './reviews.repository.ts'

const twoDecimals = (value: number) => Math.round(value * 100) / 100

/**
 * Profile statistics (decision 0034): read from counters kept in the transactions
 * that change them (the seller's ratings, orders by status, the services' figures), so a profile
 * never aggregates the reviews.
 */
export function createUserStats(deps: {
  db: Db
  catalogue: Pick<CatalogueService, 'sellerServiceFigures'>
  orders: Pick<OrdersService, 'sellerOrderCounts'>
  users: Pick<UsersService, 'findAccountById'>
}) {
  const { db, catalogue, orders, users } = deps

  async function ratingsOf(executor: Executor, userId: string) {
    const row = await createReviewsRepository(executor).sellerRatingsOf(userId)
    const count = row?.reviewsCount ?? 0
    return {
      count,
      average: count === 0 ? 0 : twoDecimals(row!.ratingSum / count),
      distribution: { 5: row?.fives ?? 0, 4: row?.fours ?? 0, 3: row?.threes ?? 0, 2: row?.twos ?? 0, 1: row?.ones ?? 0 },
    }
  }

  return {
    /** The public profile's `stats`. */
    async publicStatsOf(executor: Executor, userId: string) {
      const [services, ordersByStatus, ratings] = await Promise.all([catalogue.sellerServiceFigures(executor, userId), orders.sellerOrderCounts(executor, userId), ratingsOf(executor, userId)])
      return { servicesCount: services.active, completedOrdersCount: ordersByStatus.get('completed') ?? 0, averageRating: ratings.average, reviewsCount: ratings.count }
    },

    /** `GET /users/{id}/stats`: an active user's extended record; 404 otherwise. */
    async statsOf(userId: string) {
      const account = await users.findAccountById(db, userId)
      if (!account?.isActive) throw notFound('User')
      const [services, ordersByStatus, ratings] = await Promise.all([catalogue.sellerServiceFigures(db, userId), orders.sellerOrderCounts(db, userId), ratingsOf(db, userId)])
      const completed = ordersByStatus.get('completed') ?? 0
      const ended = completed + (ordersByStatus.get('cancelled') ?? 0)
      return {
        totalServices: services.total,
        activeServices: services.active,
        averageServicePrice: fromCents(services.averageActivePriceCents),
        totalOrders: [...ordersByStatus.values()].reduce((sum, value) => sum + value, 0),
        completedOrders: completed,
        completionRate: ended === 0 ? 0 : twoDecimals((completed / ended) * 100),
        totalReviews: ratings.count,
        averageRating: ratings.average,
        ratingDistribution: ratings.distribution,
        memberSince: account.createdAt.toISOString(),
        lastLogin: account.lastLogin?.toISOString() ?? null,
        isKYCVerified: account.isKycVerified,
      }
    },
  }
}

export type UserStats = ReturnType<typeof createUserStats>
