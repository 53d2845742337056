import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { reviewsErrors } from './reviews.errors.ts'
import { CreateReviewBody, ReplyBody, Review, ServiceReviewsQuery, UserStats } from './reviews.schemas.ts'
import type { ReviewsService } from './reviews.service.ts'
import type { UserStats as UserStatsService } from './user-stats.service.ts'

const tags = ['reviews']
const security = [{ bearerAuth: [] }]

export const reviewsRoutes: FastifyPluginAsyncTypebox<{ reviews: ReviewsService; stats: UserStatsService }> = async (app, { reviews, stats }) => {
  app.post(
    '/reviews',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Review a completed order (buyer)',
        description: "Once per order. The rating joins the service's and the seller's averages at once. Another user's order is 404.",
        body: CreateReviewBody,
        response: responses({ 201: Envelope(Review) }, 400, 401, 404, reviewsErrors.NOT_REVIEWABLE, reviewsErrors.ALREADY_REVIEWED),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await reviews.createReview(actorOf(request), request.body))),
  )

  app.post(
    '/reviews/:reviewId/reply',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Reply to a review (the reviewed seller, once)',
        description: 'Anyone but the seller of the reviewed order gets 404.',
        params: IdParams('reviewId'),
        body: ReplyBody,
        response: responses({ 200: Envelope(Review) }, 400, 401, 404, reviewsErrors.ALREADY_REPLIED),
      },
    },
    async (request) => ok(await reviews.replyToReview(actorOf(request), request.params.reviewId, request.body.reply)),
  )

  app.get(
    '/services/:serviceId/reviews',
    {
      schema: {
        tags,
        summary: 'Reviews of a service',
        description: 'Newest first, 10 per page by default. A service that is not active is 404 except to its owner and staff with view_services.',
        params: IdParams('serviceId'),
        querystring: ServiceReviewsQuery,
        response: responses({ 200: Envelope(Page(Review)) }, 400, 404),
      },
    },
    async (request) => ok(await reviews.listServiceReviews(request.session?.actor ?? null, request.params.serviceId, request.query)),
  )

  app.get(
    '/users/:userId/stats',
    {
      schema: {
        tags: ['users'],
        summary: 'Extended statistics of a user',
        description: 'The user as a seller: services (`totalServices` not deleted, `activeServices`), orders (`totalOrders` in any status), `completionRate` (completed over completed and cancelled, in percent; 0 when none ended), ratings and their distribution. Inactive or unknown users are 404.',
        params: IdParams('userId'),
        response: responses({ 200: Envelope(UserStats) }, 404),
      },
    },
    async (request) => ok(await stats.statsOf(request.params.userId)),
  )
}
