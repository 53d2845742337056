import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const reviewsErrors = defineErrors({
  NOT_REVIEWABLE: { status: 422, description: 'Only a completed order can be reviewed, by its buyer or its seller.' },
  ALREADY_REVIEWED: { status: 422, description: 'The caller already reviewed this order: each party reviews it once.' },
  REVIEW_WINDOW_CLOSED: { status: 422, description: 'More than REVIEW_WINDOW_DAYS have passed since the order completed: its reviews are closed.' },
  REVIEW_HIDDEN: { status: 422, description: 'The review is not public yet (both parties have not reviewed and the window is open): it can be answered once it is.' },
  ALREADY_REPLIED: { status: 422, description: 'The review already has its reply.' },
})

export const notReviewable = (why: string): AppError => fail(reviewsErrors.NOT_REVIEWABLE, why)
export const alreadyReviewed = (): AppError => fail(reviewsErrors.ALREADY_REVIEWED, 'You have already reviewed this order')
export const reviewWindowClosed = (days: number): AppError => fail(reviewsErrors.REVIEW_WINDOW_CLOSED, `An order can be reviewed within ${days} days of its completion`)
export const reviewHidden = (): AppError => fail(reviewsErrors.REVIEW_HIDDEN, 'This review is not public yet')
export const alreadyReplied = (): AppError => fail(reviewsErrors.ALREADY_REPLIED, 'You have already replied to this review')
