import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { OrdersService } from '../orders/orders.module.ts'
import type { UsersService, UserSummary } from '../users/users.module.ts'
import { createReviewsRepository } from './reviews.repository.ts'
import type { ReviewAuthorRole, ReviewRow } from './reviews.table.ts'

/**
 * Who sees what of a review: anyone once it is public; while it is hidden, its author sees it
 * whole, the party it is about sees that it exists, and nobody else sees anything.
 */
export function sightOf(row: ReviewRow, viewerId: string | null): 'whole' | 'existence' | 'nothing' {
  if (row.publishedAt !== null || row.reviewerId === viewerId) return 'whole'
  return row.subjectId === viewerId ? 'existence' : 'nothing'
}

export interface ReviewReadingDeps {
  db: Db
  clock: Clock
  windowMs: number
  orders: Pick<OrdersService, 'findOrder'>
  catalogue: Pick<CatalogueService, 'visibleService'>
  users: Pick<UsersService, 'publicSummariesOf' | 'findAccountById'>
}

/** The answers about reviews: one review, an order's two, and the public lists of a service and of a user. */
export function createReviewReading(deps: ReviewReadingDeps) {
  const { db, clock, windowMs, orders, catalogue, users } = deps

  async function peopleOf(executor: Executor, rows: ReviewRow[]) {
    const people = await users.publicSummariesOf(executor, [...new Set(rows.flatMap((row) => [row.reviewerId, row.subjectId]))])
    return (id: string): UserSummary => people.get(id) ?? { id, fullName: '', username: '', avatar: null }
  }

  const existenceOf = (row: ReviewRow, personOf: (id: string) => UserSummary) => ({
    id: row.id,
    orderId: row.orderId,
    authorRole: row.authorRole,
    status: 'hidden' as const,
    reviewer: personOf(row.reviewerId),
    subject: personOf(row.subjectId),
    createdAt: row.createdAt.toISOString(),
  })

  const wholeOf = (row: ReviewRow, personOf: (id: string) => UserSummary) => ({
    ...existenceOf(row, personOf),
    serviceId: row.serviceId,
    status: row.publishedAt === null ? ('hidden' as const) : ('published' as const),
    rating: row.rating,
    criteria: row.communication === null || row.quality === null || row.delivery === null ? null : { communication: row.communication, quality: row.quality, delivery: row.delivery },
    comment: row.comment,
    reply: row.reply === null ? null : { text: row.reply, createdAt: row.repliedAt!.toISOString() },
    publishedAt: row.publishedAt?.toISOString() ?? null,
  })

  /** Each review as `viewerId` may see it (rows they may not see at all are left out before). */
  async function describeAll(executor: Executor, rows: ReviewRow[], viewerId: string | null) {
    const personOf = await peopleOf(executor, rows)
    return rows.map((row) => (sightOf(row, viewerId) === 'whole' ? wholeOf(row, personOf) : existenceOf(row, personOf)))
  }

  /** A review as its author sees it (and anyone, once it is public). */
  const describeWhole = async (executor: Executor, row: ReviewRow) => wholeOf(row, await peopleOf(executor, [row]))

  /** A page of public reviews (which anyone sees whole). */
  async function publicPage(rows: ReviewRow[], total: number, page: PageRequest) {
    const personOf = await peopleOf(db, rows)
    return toPage(rows.map((row) => wholeOf(row, personOf)), total, page)
  }

  return {
    describeWhole,

    /** `GET /reviews/{id}`: as the caller may see it; a hidden review is 404 to anyone but its two parties. */
    async getReview(viewer: Actor | null, reviewId: string) {
      const row = await createReviewsRepository(db).findById(reviewId)
      if (!row || sightOf(row, viewer?.id ?? null) === 'nothing') throw notFound('Review')
      return (await describeAll(db, [row], viewer?.id ?? null))[0]!
    },

    /** `GET /orders/{id}/reviews`: its parties only (anyone else 404), each review as they may see it. */
    async orderReviews(actor: Actor, orderId: string) {
      const order = await orders.findOrder(db, orderId)
      if (!order || (order.buyerId !== actor.id && order.sellerId !== actor.id)) throw notFound('Order')
      const rows = await createReviewsRepository(db).findByOrder(orderId)
      const described = await describeAll(db, rows, actor.id)
      const by = (role: ReviewAuthorRole) => described.find((review) => review.authorRole === role) ?? null
      const closesAt = order.status === 'completed' && order.completedAt !== null ? new Date(order.completedAt.getTime() + windowMs) : null
      const role: ReviewAuthorRole = order.buyerId === actor.id ? 'buyer' : 'seller'
      return {
        buyerReview: by('buyer'),
        sellerReview: by('seller'),
        windowClosesAt: closesAt?.toISOString() ?? null,
        canReview: closesAt !== null && clock.now().getTime() < closesAt.getTime() && !rows.some((row) => row.authorRole === role),
      }
    },

    /** `GET /services/{id}/reviews`: the buyers' public reviews, newest first; the service must be visible to the viewer. */
    async listServiceReviews(viewer: Actor | null, serviceId: string, page: PageRequest) {
      await catalogue.visibleService(db, viewer, serviceId)
      const { rows, total } = await createReviewsRepository(db).listPublicByService(serviceId, offsetOf(page), page.limit)
      return publicPage(rows, total, page)
    },

    /** `GET /users/{id}/reviews`: the public reviews an active user received as seller or as buyer, newest first. */
    async listUserReviews(userId: string, query: PageRequest & { role?: 'seller' | 'buyer' }) {
      const account = await users.findAccountById(db, userId)
      if (!account?.isActive) throw notFound('User')
      const writtenBy: ReviewAuthorRole = query.role === 'buyer' ? 'seller' : 'buyer'
      const { rows, total } = await createReviewsRepository(db).listPublicBySubject(userId, writtenBy, offsetOf(query), query.limit)
      return publicPage(rows, total, query)
    },
  }
}

export type ReviewReading = ReturnType<typeof createReviewReading>
