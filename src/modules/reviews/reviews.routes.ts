import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { reviewsErrors } from './reviews.errors.ts'
import { reviewListsRoutes } from './review-lists.routes.ts'
import { CreateReviewBody, OrderReviews, ReplyBody, Review, ReviewAsSeen } from './reviews.schemas.ts'
import type { ReviewsService } from './reviews.service.ts'
import type { UserStats as UserStatsService } from './user-stats.service.ts'

const tags = ['reviews']
const security = [{ bearerAuth: [] }]

/** Writing, answering and reading reviews; the public lists and the statistics are registered from `review-lists.routes.ts`. */
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

  await app.register(reviewListsRoutes, { reviews, stats })
}
