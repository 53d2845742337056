import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { ReviewPublication } from './review-publication.service.ts'
import type { ReviewReading } from './review-reading.service.ts'
import { alreadyReplied, alreadyReviewed, notReviewable, reviewHidden, reviewWindowClosed } from './reviews.errors.ts'
import { reviewsEvents } from './reviews.events.ts'
import { createReviewsRepository } from './reviews.repository.ts'
import type { ReviewAuthorRole } from './reviews.table.ts'

export interface ReviewInput {
  orderId: string
  rating: number
  comment?: string
  criteria?: { communication: number; quality: number; delivery: number }
}

export interface ReviewWritingDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  windowMs: number
  orders: Pick<OrdersService, 'lockOrder'>
  publication: Pick<ReviewPublication, 'publishReview'>
  reading: Pick<ReviewReading, 'describeWhole'>
}

/** Writing reviews (each party of a completed order once, within the window) and replying to them. */
export function createReviewWriting(deps: ReviewWritingDeps) {
  const { db, clock, outbox, windowMs, orders, publication, reading } = deps
  const windowDays = Math.round((windowMs / DAY) * 1000) / 1000

  return {
    /**
     * `POST /reviews`: the buyer or the seller of a completed order, once each, within the window.
     * The order is locked first, so two reviews sent at once by one party are one review and one
     * 422 ALREADY_REVIEWED, and the second party's review always sees the first: it publishes both.
     */
    async createReview(actor: Actor, input: ReviewInput) {
      const row = await db.transaction(async (tx) => {
        const order = await orders.lockOrder(tx, input.orderId)
        if (!order || (order.buyerId !== actor.id && order.sellerId !== actor.id)) throw notFound('Order')
        const role: ReviewAuthorRole = order.buyerId === actor.id ? 'buyer' : 'seller'
        if (role === 'seller' && input.criteria) throw fieldError('criteria', 'is the buyer’s rating of the seller’s work: a seller reviews the buyer with rating and comment')
        if (order.status !== 'completed' || order.completedAt === null) throw notReviewable(`A ${order.status} order cannot be reviewed: only a completed one`)
        const reviews = createReviewsRepository(tx)
        const written = await reviews.findByOrder(order.id)
        if (written.some((review) => review.authorRole === role)) throw alreadyReviewed()
        const now = clock.now()
        if (now.getTime() >= order.completedAt.getTime() + windowMs) throw reviewWindowClosed(windowDays)
        const review = await reviews.insert({
          id: newId(),
          orderId: order.id,
          serviceId: order.serviceId,
          sellerId: order.sellerId,
          reviewerId: actor.id,
          authorRole: role,
          subjectId: role === 'buyer' ? order.sellerId : order.buyerId,
          rating: input.rating,
          communication: input.criteria?.communication ?? null,
          quality: input.criteria?.quality ?? null,
          delivery: input.criteria?.delivery ?? null,
          comment: input.comment?.trim() ?? '',
          orderCompletedAt: order.completedAt,
          createdAt: now,
        })
        await emitEvent(
          outbox,
          tx,
          reviewsEvents.reviewCreated,
          { reviewId: review.id, orderId: order.id, serviceId: order.serviceId, sellerId: order.sellerId, authorId: actor.id, subjectId: review.subjectId, rating: input.rating },
          now,
        )
        if (written.length === 0) return review
        // Both parties have now written theirs: neither review waits for the window.
        const other = written.find((candidate) => candidate.publishedAt === null)
        if (other) await publication.publishReview(tx, other, now)
        return publication.publishReview(tx, review, now)
      })
      return reading.describeWhole(db, row)
    },

    /** `POST /reviews/{id}/reply`: the party a public review is about, once; anyone else 404. */
    async replyToReview(actor: Actor, reviewId: string, text: string) {
      const row = await db.transaction(async (tx) => {
        const reviews = createReviewsRepository(tx)
        const review = await reviews.lockById(reviewId)
        if (!review || review.subjectId !== actor.id) throw notFound('Review')
        if (review.publishedAt === null) throw reviewHidden()
        if (review.reply !== null) throw alreadyReplied()
        const now = clock.now()
        const replied = await reviews.setReply(review.id, text.trim(), now)
        await emitEvent(outbox, tx, reviewsEvents.reviewReplied, { reviewId: review.id, orderId: review.orderId, authorId: review.reviewerId, subjectId: review.subjectId }, now)
        return replied
      })
      return reading.describeWhole(db, row)
    },
  }
}
