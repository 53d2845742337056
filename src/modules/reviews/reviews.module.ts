import { defineModule } from '../../platform/module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { reviewsErrors } from './reviews.errors.ts'
import { reviewsEvents } from './reviews.events.ts'
import { reviewsRoutes } from './reviews.routes.ts'
import { createReviewsService } from './reviews.service.ts'
import { reviews, sellerRatings } from './reviews.table.ts'
import { createUserStats } from './user-stats.service.ts'

/** Reviews of completed orders, sellers' replies, and the statistics of profiles (decision 0034). */
export const reviewsModule = defineModule({
  name: 'reviews',
  needs: ['orders', 'catalogue', 'users'],
  tables: { reviews, sellerRatings },
  create: ({ db, clock, outbox }, deps: { orders: OrdersService; catalogue: CatalogueService; users: UsersService }) => {
    const stats = createUserStats({ db, ...deps })
    // The public profile (users module) shows these statistics; users cannot call this module, so it is told.
    deps.users.registerPublicStats((executor, userId) => stats.publicStatsOf(executor, userId))
    return { ...createReviewsService({ db, clock, outbox, ...deps }), stats }
  },
  routes: (api) => async (app) => {
    await app.register(reviewsRoutes, { reviews: api, stats: api.stats })
  },
  events: Object.values(reviewsEvents),
  errors: reviewsErrors,
})

export type ReviewsApi = ReturnType<(typeof reviewsModule)['create']>
