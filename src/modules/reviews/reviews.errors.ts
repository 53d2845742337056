import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const reviewsErrors = defineErrors({
  NOT_REVIEWABLE: { status: 422, description: 'Only the buyer reviews an order, and only once it is completed.' },
  ALREADY_REVIEWED: { status: 422, description: 'The order already has its review.' },
  ALREADY_REPLIED: { status: 422, description: 'The seller already replied to this review.' },
})

export const notReviewable = (why: string): AppError => fail(reviewsErrors.NOT_REVIEWABLE, why)
export const alreadyReviewed = (): AppError => fail(reviewsErrors.ALREADY_REVIEWED, 'This order has already been reviewed')
export const alreadyReplied = (): AppError => fail(reviewsErrors.ALREADY_REPLIED, 'You have already replied to this review')
