import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { Review, ServiceReviewsQuery, UserReviewsQuery, UserStats } from './reviews.schemas.ts'
import type { ReviewsService } from './reviews.service.ts'
import type { UserStats as UserStatsService } from './user-stats.service.ts'

/** What anyone may read: a service's public reviews, a user's, and a user's statistics. */
export const reviewListsRoutes: FastifyPluginAsyncTypebox<{ reviews: ReviewsService; stats: UserStatsService }> = async (app, { reviews, stats }) => {
  app.get(
    '/services/:serviceId/reviews',
    {
      schema: {
        tags: ['reviews'],
        summary: 'Reviews of a service',
        description: 'The buyers’ public reviews, newest public first, 10 per page by default. A service that is not active is 404 except to its owner and staff with view_services.',
        params: IdParams('serviceId'),
        querystring: ServiceReviewsQuery,
        response: responses({ 200: Envelope(Page(Review)) }, 400, 404),
      },
    },
    async (request) => ok(await reviews.listServiceReviews(request.session?.actor ?? null, request.params.serviceId, request.query)),
  )

  app.get(
    '/users/:userId/reviews',
    {
      schema: {
        tags: ['users'],
        summary: 'Reviews a user received',
        description: 'The public reviews a user received as seller (`role=seller`, the default: from buyers) or as buyer (`role=buyer`: from sellers), newest public first, 10 per page by default. Inactive or unknown users are 404.',
        params: IdParams('userId'),
        querystring: UserReviewsQuery,
        response: responses({ 200: Envelope(Page(Review)) }, 400, 404),
      },
    },
    async (request) => ok(await reviews.listUserReviews(request.params.userId, request.query)),
  )

  app.get(
    '/users/:userId/stats',
    {
      schema: {
        tags: ['users'],
        summary: 'Extended statistics of a user',
        description:
          'The user as a seller: services (`totalServices` not deleted, `activeServices`), orders (`totalOrders` in any status), `completionRate` (completed over completed and cancelled, in percent; 0 when none ended), `onTimeDeliveryRate` (first delivered by the due time over delivered, in percent; 0 when none was delivered), public ratings and their distribution, the seller level and when it was last evaluated. Inactive or unknown users are 404.',
        params: IdParams('userId'),
        response: responses({ 200: Envelope(UserStats) }, 404),
      },
    },
    async (request) => ok(await stats.statsOf(request.params.userId)),
  )
}
