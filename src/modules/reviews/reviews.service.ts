import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { alreadyReplied, alreadyReviewed, notReviewable } from './reviews.errors.ts'
import { reviewsEvents } from './reviews.events.ts'
import { createReviewsRepository } from './reviews.repository.ts'
import type { ReviewRow } from './reviews.table.ts'

export interface ReviewInput {
  orderId: string
  rating: number
  comment?: string
  criteria?: { communication: number; quality: number; delivery: number }
}

export interface ReviewsDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  orders: Pick<OrdersService, 'lockOrder'>
  catalogue: Pick<CatalogueService, 'recordRating' | 'visibleService'>
  users: Pick<UsersService, 'publicSummariesOf'>
}

/**
 * Reviews (decision 0033): the buyer's one review of a completed order, folded into the
 * service's and the seller's ratings in the same transaction, and the seller's one reply.
 */
export function createReviewsService(deps: ReviewsDeps) {
  const { db, clock, outbox, orders, catalogue, users } = deps

  async function describeAll(rows: ReviewRow[]) {
    const reviewers = await users.publicSummariesOf(db, [...new Set(rows.map((row) => row.reviewerId))])
    return rows.map((row) => ({
      id: row.id,
      orderId: row.orderId,
      serviceId: row.serviceId,
      rating: row.rating,
      criteria: row.communication === null || row.quality === null || row.delivery === null ? null : { communication: row.communication, quality: row.quality, delivery: row.delivery },
      comment: row.comment,
      reviewer: reviewers.get(row.reviewerId)!,
      reply: row.reply === null ? null : { text: row.reply, createdAt: row.repliedAt!.toISOString() },
      createdAt: row.createdAt.toISOString(),
    }))
  }
  const describe = async (row: ReviewRow) => (await describeAll([row]))[0]!

  return {
    /**
     * `POST /reviews`: the buyer, once, on a completed order. The order is locked first, so two
     * reviews sent at once are one review and one 422 ALREADY_REVIEWED.
     */
    async createReview(actor: Actor, input: ReviewInput) {
      const row = await db.transaction(async (tx) => {
        const order = await orders.lockOrder(tx, input.orderId)
        if (!order || (order.buyerId !== actor.id && order.sellerId !== actor.id)) throw notFound('Order')
        if (order.buyerId !== actor.id) throw notReviewable('Only the buyer reviews an order')
        if (order.status !== 'completed') throw notReviewable(`A ${order.status} order cannot be reviewed: only a completed one`)
        const reviews = createReviewsRepository(tx)
        if (await reviews.findByOrder(order.id)) throw alreadyReviewed()
        const now = clock.now()
        const review = await reviews.insert({
          id: newId(),
          orderId: order.id,
          serviceId: order.serviceId,
          sellerId: order.sellerId,
          reviewerId: actor.id,
          rating: input.rating,
          communication: input.criteria?.communication ?? null,
          quality: input.criteria?.quality ?? null,
          delivery: input.criteria?.delivery ?? null,
          comment: input.comment?.trim() ?? '',
          createdAt: now,
        })
        if (order.serviceId !== null) await catalogue.recordRating(tx, order.serviceId, input.rating)
        await reviews.addSellerRating(order.sellerId, input.rating as 1 | 2 | 3 | 4 | 5)
        await emitEvent(outbox, tx, reviewsEvents.reviewCreated, { reviewId: review.id, orderId: order.id, serviceId: order.serviceId, sellerId: order.sellerId, rating: input.rating }, now)
        return review
      })
      return describe(row)
    },

    /** `POST /reviews/{id}/reply`: the reviewed seller, once; anyone else 404. */
    async replyToReview(actor: Actor, reviewId: string, text: string) {
      const row = await db.transaction(async (tx) => {
        const reviews = createReviewsRepository(tx)
        const review = await reviews.lockById(reviewId)
        if (!review || review.sellerId !== actor.id) throw notFound('Review')
        if (review.reply !== null) throw alreadyReplied()
        return reviews.setReply(review.id, text.trim(), clock.now())
      })
      return describe(row)
    },

    /** `GET /services/{id}/reviews`: newest first; the service must be visible to the viewer. */
    async listServiceReviews(viewer: Actor | null, serviceId: string, page: PageRequest) {
      await catalogue.visibleService(db, viewer, serviceId)
      const { rows, total } = await createReviewsRepository(db).listByService(serviceId, offsetOf(page), page.limit)
      return toPage(await describeAll(rows), total, page)
    },
  }
}

export type ReviewsService = ReturnType<typeof createReviewsService>
