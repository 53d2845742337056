import { DAY } from '../../lib/clock.ts'
import { defineModule } from '../../platform/module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { reviewsErrors } from './reviews.errors.ts'
import { reviewsEvents } from './reviews.events.ts'
import { reviewsRoutes } from './reviews.routes.ts'
import { createReviewsService } from './reviews.service.ts'
import { buyerRatings, reviews, sellerRatings } from './reviews.table.ts'
import { createUserStats } from './user-stats.service.ts'

/** Two-way reviews of completed orders and their replies, the statistics of profiles (decision 0034), and seller levels (docs/seller-levels.md). */
export const reviewsModule = defineModule({
  name: 'reviews',
  needs: ['orders', 'catalogue', 'users'],
  tables: { reviews, sellerRatings, buyerRatings },
  create: ({ config, db, clock, outbox }, deps: { orders: OrdersService; catalogue: CatalogueService; users: UsersService }) => {
    const stats = createUserStats({ db, ...deps })
    // The public profile (users module) shows these statistics; users cannot call this module, so it is told.
    deps.users.registerPublicStats((executor, userId) => stats.publicStatsOf(executor, userId))
    return { ...createReviewsService({ db, clock, outbox, windowMs: config.reviews.windowMs, sellerLevels: config.sellerLevels, ...deps }), stats }
  },
  routes: (api, { config }) => async (app) => {
    await app.register(reviewsRoutes, { reviews: api, stats: api.stats, windowDays: config.reviews.windowMs / DAY })
  },
  periodic: (api, { config }) => [
    { name: 'publish-due-reviews', everyMs: config.workerTickMs, run: () => api.publishDueReviews() },
    // Several workers may run this: each skips the sellers another evaluated in the last half interval.
    {
      name: 'evaluate-seller-levels',
      everyMs: config.sellerLevels.evaluationMs,
      run: () => api.evaluateSellerLevels({ skipEvaluatedWithinMs: config.sellerLevels.evaluationMs / 2 }),
    },
  ],
  events: Object.values(reviewsEvents),
  errors: reviewsErrors,
})

export type ReviewsApi = ReturnType<(typeof reviewsModule)['create']>
