import type { Config } from '../../config.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createReviewPublication } from './review-publication.service.ts'
import { createReviewReading } from './review-reading.service.ts'
import { createReviewWriting } from './review-writing.service.ts'
import { createSellerLevels } from './seller-levels.service.ts'

export interface ReviewsDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  /** How long after an order's completion its parties may review it (REVIEW_WINDOW_DAYS). */
  windowMs: number
  sellerLevels: Config['sellerLevels']
  orders: Pick<OrdersService, 'lockOrder' | 'findOrder' | 'sellerPerformance'>
  catalogue: Pick<CatalogueService, 'recordRating' | 'visibleService'>
  users: Pick<UsersService, 'publicSummariesOf' | 'findAccountById' | 'accountsForLevelEvaluation' | 'markLevelsEvaluated' | 'lockAccount' | 'recordSellerLevel'>
}

/**
 * Reviews (decision 0033) and seller levels, each group in its own file: both parties of a
 * completed order review each other, blind until both are in or the window closes
 * (`review-writing`, `review-publication`, `review-reading`); the worker evaluates seller levels
 * from orders and public ratings (`seller-levels`).
 */
export function createReviewsService(deps: ReviewsDeps) {
  const { db, clock, outbox, windowMs, orders, catalogue, users } = deps
  const publication = createReviewPublication({ db, clock, outbox, windowMs, catalogue })
  const reading = createReviewReading({ db, clock, windowMs, orders, catalogue, users })
  return {
    ...createReviewWriting({ db, clock, outbox, windowMs, orders, publication, reading }),
    ...reading,
    publishDueReviews: (limit?: number) => publication.publishDueReviews(limit),
    ...createSellerLevels({ db, clock, outbox, settings: deps.sellerLevels, orders, users }),
  }
}

export type ReviewsService = ReturnType<typeof createReviewsService>
