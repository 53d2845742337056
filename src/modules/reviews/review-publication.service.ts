import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import { reviewsEvents } from './reviews.events.ts'
import { createRatingsRepository, type Rating } from './ratings.repository.ts'
import { createReviewsRepository } from './reviews.repository.ts'
import type { ReviewRow } from './reviews.table.ts'

export interface ReviewPublicationDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  windowMs: number
  catalogue: Pick<CatalogueService, 'recordRating'>
}

/**
 * Making reviews public: when the second party of an order reviews it, or when the worker finds
 * the window of a hidden one has passed. Only then does a rating join the averages (the service's,
 * the seller's or the buyer's) and `review.published` go out.
 */
export function createReviewPublication(deps: ReviewPublicationDeps) {
  const { db, clock, outbox, windowMs, catalogue } = deps

  /**
   * Publishes a hidden review in the caller's transaction. The update only takes a row still
   * hidden, so when the writer of the second review and the worker race for one, whoever comes
   * second changes nothing and counts nothing: each review is counted and announced once.
   */
  async function publishReview(tx: Tx, row: ReviewRow, at: Date): Promise<ReviewRow> {
    const published = await createReviewsRepository(tx).markPublished(row.id, at)
    if (!published) return row
    const rating = published.rating as Rating
    const ratings = createRatingsRepository(tx)
    if (published.authorRole === 'buyer') {
      if (published.serviceId !== null) await catalogue.recordRating(tx, published.serviceId, rating)
      await ratings.addSellerRating(published.subjectId, rating)
    } else {
      await ratings.addBuyerRating(published.subjectId, rating)
    }
    await emitEvent(outbox, tx, reviewsEvents.reviewPublished, { reviewId: published.id, orderId: published.orderId, authorId: published.reviewerId, subjectId: published.subjectId }, at)
    return published
  }

  /** One hidden review whose window has passed, published in its own transaction under its row lock; false when none is due. */
  const publishOneDue = () =>
    db.transaction(async (tx) => {
      const now = clock.now()
      const [row] = await createReviewsRepository(tx).lockDueHidden(new Date(now.getTime() - windowMs), 1)
      if (!row) return false
      await publishReview(tx, row, now)
      return true
    })

  return {
    publishReview,

    /** The worker's periodic task: publishes the hidden reviews whose window has passed, at most `limit` a run; returns how many. */
    async publishDueReviews(limit = 100): Promise<number> {
      let published = 0
      while (published < limit && (await publishOneDue())) published++
      return published
    },
  }
}

export type ReviewPublication = ReturnType<typeof createReviewPublication>
