import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { reviewsErrors } from './reviews.errors.ts'
import { CreateReviewBody, OrderReviews, ReplyBody, Review, ReviewAsSeen, ServiceReviewsQuery, UserReviewsQuery, UserStats } from './reviews.schemas.ts'
import type { ReviewsService } from './reviews.service.ts'
import type { UserStats as UserStatsService } from './user-stats.service.ts'

const tags = ['reviews']
const security = [{ bearerAuth: [] }]

export const reviewsRoutes: FastifyPluginAsyncTypebox<{ reviews: ReviewsService; stats: UserStatsService; windowDays: number }> = async (app, { reviews, stats, windowDays }) => {
  const blind = `Both reviews of an order stay hidden until both parties have written theirs or ${windowDays} days (REVIEW_WINDOW_DAYS) have passed since it completed; until then only the author sees a review whole, the other party sees that it exists, and it counts in no average.`

  app.post(
    '/reviews',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Review a completed order (its buyer or its seller, once each)',
        description: `The buyer rates the seller and the service (\`criteria\` optional); the seller rates the buyer with \`rating\` and \`comment\` (\`criteria\` from the seller is 400 on \`criteria\`). ${blind} After that no review of the order is accepted (422 \`REVIEW_WINDOW_CLOSED\`). Another user's order is 404.`,
        body: CreateReviewBody,
        response: responses({ 201: Envelope(Review) }, 400, 401, 404, reviewsErrors.NOT_REVIEWABLE, reviewsErrors.ALREADY_REVIEWED, reviewsErrors.REVIEW_WINDOW_CLOSED),
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
        summary: 'Reply to a review (the party it is about, once)',
        description: 'The seller answers a buyer’s review, the buyer a seller’s, once the review is public (422 `REVIEW_HIDDEN` before). Anyone else gets 404.',
        params: IdParams('reviewId'),
        body: ReplyBody,
        response: responses({ 200: Envelope(Review) }, 400, 401, 404, reviewsErrors.REVIEW_HIDDEN, reviewsErrors.ALREADY_REPLIED),
      },
    },
    async (request) => ok(await reviews.replyToReview(actorOf(request), request.params.reviewId, request.body.reply)),
  )

  app.get(
    '/reviews/:reviewId',
    {
      schema: {
        tags,
        summary: 'A review',
        description: `Anyone may read a public review. ${blind} A hidden review is 404 to anyone but the order's two parties.`,
        params: IdParams('reviewId'),
        response: responses({ 200: Envelope(ReviewAsSeen) }, 404),
      },
    },
    async (request) => ok(await reviews.getReview(request.session?.actor ?? null, request.params.reviewId)),
  )

  app.get(
    '/orders/:orderId/reviews',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'The reviews of an order (its parties)',
        description: `The buyer's and the seller's review as the caller may see them, until when the order may be reviewed, and whether the caller may review it now. ${blind} Anyone but the order's buyer and seller gets 404.`,
        params: IdParams('orderId'),
        response: responses({ 200: Envelope(OrderReviews) }, 401, 404),
      },
    },
    async (request) => ok(await reviews.orderReviews(actorOf(request), request.params.orderId)),
  )

  app.get(
    '/services/:serviceId/reviews',
    {
      schema: {
        tags,
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
