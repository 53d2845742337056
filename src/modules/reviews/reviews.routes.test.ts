import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { eventsNamed } from '../../../test/factories/events.ts'
import { createActiveService, createFundedBuyer, orderIn, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { reviews } from './reviews.table.ts'

describe('reviews and profile statistics', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const review = (token: string | undefined, payload: Record<string, unknown>) => request(ctx.app, { method: 'POST', url: '/reviews', token, payload })
  const serviceRating = async (serviceId: string) => (await request(ctx.app, { method: 'GET', url: `/services/${serviceId}` })).json().data.rating as { average: number; count: number }
  /** Both parties review the order, which makes both reviews public. */
  const reviewBoth = async (order: PlacedOrder, buyerRating: number, sellerRating = 5, comment?: string) => {
    const byBuyer = await review(order.buyer.accessToken, { orderId: order.orderId, rating: buyerRating, ...(comment && { comment }) })
    expect(byBuyer.statusCode, byBuyer.body).toBe(201)
    const bySeller = await review(order.seller.accessToken, { orderId: order.orderId, rating: sellerRating })
    expect(bySeller.statusCode, bySeller.body).toBe(201)
    return { byBuyer: byBuyer.json().data, bySeller: bySeller.json().data }
  }

  describe('POST /reviews', () => {
    let completed: PlacedOrder
    beforeAll(async () => {
      completed = await orderIn(ctx, 'completed')
    })

    it('lets the buyer review a completed order once; the author sees it whole while it stays hidden, and it counts nowhere yet', async () => {
      const response = await review(completed.buyer.accessToken, { orderId: completed.orderId, rating: 4, comment: 'Great logo', criteria: { communication: 5, quality: 4, delivery: 3 } })
      expect(response.statusCode, response.body).toBe(201)
      const data = response.json().data
      expect(data).toMatchObject({
        orderId: completed.orderId,
        serviceId: completed.serviceId,
        authorRole: 'buyer',
        status: 'hidden',
        rating: 4,
        comment: 'Great logo',
        criteria: { communication: 5, quality: 4, delivery: 3 },
        reviewer: { id: completed.buyer.user.id, username: completed.buyer.user.username },
        subject: { id: completed.seller.user.id, username: completed.seller.user.username },
        reply: null,
        publishedAt: null,
      })
      expect(data.reviewer).not.toHaveProperty('email')
      expect(await serviceRating(completed.serviceId)).toEqual({ average: 0, count: 0 })
      expect((await request(ctx.app, { method: 'GET', url: `/users/${completed.seller.user.id}` })).json().data.stats).toMatchObject({ averageRating: 0, reviewsCount: 0 })
      expect(await eventsNamed(ctx, 'review.created')).toContainEqual({
        reviewId: data.id,
        orderId: completed.orderId,
        serviceId: completed.serviceId,
        sellerId: completed.seller.user.id,
        authorId: completed.buyer.user.id,
        subjectId: completed.seller.user.id,
        rating: 4,
      })
      expectError(await review(completed.buyer.accessToken, { orderId: completed.orderId, rating: 5 }), 422, 'ALREADY_REVIEWED')
    })

    it('lets the seller review the buyer with a rating and a comment, once; that publishes both reviews', async () => {
      expectError(await review(completed.seller.accessToken, { orderId: completed.orderId, rating: 5, criteria: { communication: 5, quality: 5, delivery: 5 } }), 400, 'VALIDATION_ERROR', ['criteria'])
      const response = await review(completed.seller.accessToken, { orderId: completed.orderId, rating: 3, comment: '  Slow to answer  ' })
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json().data).toMatchObject({
        authorRole: 'seller',
        status: 'published',
        rating: 3,
        comment: 'Slow to answer',
        criteria: null,
        reviewer: { id: completed.seller.user.id },
        subject: { id: completed.buyer.user.id },
      })
      expect(await serviceRating(completed.serviceId)).toEqual({ average: 4, count: 1 })
      const buyerProfile = (await request(ctx.app, { method: 'GET', url: `/users/${completed.buyer.user.id}` })).json().data
      expect(buyerProfile).toMatchObject({ buyerRating: 3, buyerReviewsCount: 1, sellerLevel: 'new' })
      expectError(await review(completed.seller.accessToken, { orderId: completed.orderId, rating: 5 }), 422, 'ALREADY_REVIEWED')
    })

    it('bad input: an uncompleted order, a stranger, ratings out of range: a 4xx and nothing written', async () => {
      const before = (await ctx.database.db.select().from(reviews)).length
      const other = await orderIn(ctx, 'completed')
      const delivered = await orderIn(ctx, 'delivered')
      expectError(await review(delivered.buyer.accessToken, { orderId: delivered.orderId, rating: 5 }), 422, 'NOT_REVIEWABLE')
      expectError(await review(delivered.seller.accessToken, { orderId: delivered.orderId, rating: 5 }), 422, 'NOT_REVIEWABLE')
      expectError(await review((await createUser(ctx)).accessToken, { orderId: other.orderId, rating: 5 }), 404, 'NOT_FOUND')
      expectError(await review(other.buyer.accessToken, { orderId: '01890000-0000-7000-8000-000000000000', rating: 5 }), 404, 'NOT_FOUND')
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 0 }), 400, 'VALIDATION_ERROR', ['rating'])
      expectError(await review(other.seller.accessToken, { orderId: other.orderId, rating: 6 }), 400, 'VALIDATION_ERROR', ['rating'])
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 4.5 }), 400, 'VALIDATION_ERROR', ['rating'])
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 5, criteria: { communication: 7, quality: 5, delivery: 5 } }), 400, 'VALIDATION_ERROR', ['criteria.communication'])
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 5, criteria: { quality: 5 } }), 400, 'VALIDATION_ERROR')
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 5, comment: 'x'.repeat(2001) }), 400, 'VALIDATION_ERROR', ['comment'])
      expectError(await review(other.buyer.accessToken, { rating: 5 }), 400, 'VALIDATION_ERROR', ['orderId'])
      expectError(await review(undefined, { orderId: other.orderId, rating: 5 }), 401, 'UNAUTHENTICATED')
      expect((await ctx.database.db.select().from(reviews)).length).toBe(before)
    })

    it('two reviews by one party at once: one is written, the other is 422 ALREADY_REVIEWED', async () => {
      const order = await orderIn(ctx, 'completed')
      const answers = await Promise.all([review(order.buyer.accessToken, { orderId: order.orderId, rating: 5 }), review(order.buyer.accessToken, { orderId: order.orderId, rating: 1 })])
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 422])
      expect(await ctx.database.db.select().from(reviews).where(eq(reviews.orderId, order.orderId))).toHaveLength(1)
    })

    it('both parties at once: both reviews are written and published, each counted and announced once', async () => {
      const order = await orderIn(ctx, 'completed')
      const answers = await Promise.all([review(order.buyer.accessToken, { orderId: order.orderId, rating: 2 }), review(order.seller.accessToken, { orderId: order.orderId, rating: 4 })])
      expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201])
      const rows = await ctx.database.db.select().from(reviews).where(eq(reviews.orderId, order.orderId))
      expect(rows.map((row) => row.publishedAt !== null)).toEqual([true, true])
      expect(await serviceRating(order.serviceId)).toEqual({ average: 2, count: 1 })
      const published = (await eventsNamed(ctx, 'review.published')).filter((data) => data.orderId === order.orderId)
      expect(published).toHaveLength(2)
      expect(published).toEqual(
        expect.arrayContaining(rows.map((row) => ({ reviewId: row.id, orderId: order.orderId, authorId: row.reviewerId, subjectId: row.subjectId }))),
      )
    })
  })

  describe('POST /reviews/{id}/reply', () => {
    it('lets the party a public review is about reply once, announced as review.replied; before it is public 422 REVIEW_HIDDEN; anyone else 404', async () => {
      const order = await orderIn(ctx, 'completed')
      const created = (await review(order.buyer.accessToken, { orderId: order.orderId, rating: 3 })).json().data
      const reply = (token: string, id: string, text = 'Thanks!') => request(ctx.app, { method: 'POST', url: `/reviews/${id}/reply`, token, payload: { reply: text } })
      expectError(await reply(order.seller.accessToken, created.id), 422, 'REVIEW_HIDDEN')
      const bySeller = (await review(order.seller.accessToken, { orderId: order.orderId, rating: 5 })).json().data
      expectError(await reply(order.buyer.accessToken, created.id), 404, 'NOT_FOUND')
      expectError(await reply((await createUser(ctx)).accessToken, created.id), 404, 'NOT_FOUND')
      expectError(await reply(order.seller.accessToken, created.id, '  '), 400, 'VALIDATION_ERROR', ['reply'])
      const first = await reply(order.seller.accessToken, created.id)
      expect(first.statusCode, first.body).toBe(200)
      expect(first.json().data.reply).toMatchObject({ text: 'Thanks!' })
      expectError(await reply(order.seller.accessToken, created.id, 'Again'), 422, 'ALREADY_REPLIED')

      // The buyer answers the seller's review of them.
      expectError(await reply(order.seller.accessToken, bySeller.id), 404, 'NOT_FOUND')
      const answered = await reply(order.buyer.accessToken, bySeller.id, 'Thank you too')
      expect(answered.statusCode, answered.body).toBe(200)
      const replied = await eventsNamed(ctx, 'review.replied')
      expect(replied).toContainEqual({ reviewId: created.id, orderId: order.orderId, authorId: order.buyer.user.id, subjectId: order.seller.user.id })
      expect(replied).toContainEqual({ reviewId: bySeller.id, orderId: order.orderId, authorId: order.seller.user.id, subjectId: order.buyer.user.id })
    })
  })

  describe('GET /services/{id}/reviews and GET /users/{id}/reviews', () => {
    it('lists the buyers’ public reviews newest first, 10 per page by default, with the reviewer’s public fields; an unknown service is 404', async () => {
      const service = await createActiveService(ctx)
      const buyer = await createFundedBuyer(ctx, 5000)
      for (let index = 0; index < 11; index++) {
        const order = await orderIn(ctx, 'completed', { service, buyer })
        await reviewBoth(order, (index % 5) + 1, 5, `review ${index}`)
        ctx.clock.advance(1000)
      }
      const hidden = await orderIn(ctx, 'completed', { service, buyer })
      await review(buyer.accessToken, { orderId: hidden.orderId, rating: 1, comment: 'not yet public' })

      const page = await request(ctx.app, { method: 'GET', url: `/services/${service.serviceId}/reviews` })
      expect(page.statusCode).toBe(200)
      const data = page.json().data
      expect(data.pagination).toMatchObject({ page: 1, limit: 10, total: 11, pages: 2, hasNext: true })
      expect(data.items[0]).toMatchObject({ comment: 'review 10', status: 'published', authorRole: 'buyer' })
      expect(Object.keys(data.items[0].reviewer).sort()).toEqual(['avatar', 'fullName', 'id', 'username'])
      expect(page.body).not.toContain('not yet public')
      const rated = await serviceRating(service.serviceId)
      expect(rated.count).toBe(11)
      expect(rated.average).toBeCloseTo(31 / 11, 10)
      expectError(await request(ctx.app, { method: 'GET', url: '/services/01890000-0000-7000-8000-000000000000/reviews' }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: `/services/${service.serviceId}/reviews?limit=101` }), 400, 'VALIDATION_ERROR', ['limit'])

      const sorted = await request(ctx.app, { method: 'GET', url: `/services?sortBy=rating&sortOrder=desc&sellerId=${service.seller.user.id}` })
      expect(sorted.json().data.items[0].rating.count).toBe(11)

      const asSeller = (await request(ctx.app, { method: 'GET', url: `/users/${service.seller.user.id}/reviews?limit=5` })).json().data
      expect(asSeller.pagination).toMatchObject({ total: 11, limit: 5 })
      expect(asSeller.items.every((item: { authorRole: string }) => item.authorRole === 'buyer')).toBe(true)
      const asBuyer = (await request(ctx.app, { method: 'GET', url: `/users/${buyer.user.id}/reviews?role=buyer` })).json().data
      expect(asBuyer.pagination.total).toBe(11)
      expect(asBuyer.items[0]).toMatchObject({ authorRole: 'seller', rating: 5, subject: { id: buyer.user.id }, reviewer: { id: service.seller.user.id } })
      expect((await request(ctx.app, { method: 'GET', url: `/users/${buyer.user.id}/reviews` })).json().data.pagination.total).toBe(0)
      expectError(await request(ctx.app, { method: 'GET', url: `/users/${buyer.user.id}/reviews?role=staff` }), 400, 'VALIDATION_ERROR', ['role'])
      expectError(await request(ctx.app, { method: 'GET', url: `/users/${(await createUser(ctx, { isActive: false })).user.id}/reviews` }), 404, 'NOT_FOUND')
    })
  })

  describe('statistics', () => {
    it('the public profile and GET /users/{id}/stats count services, orders and public reviews as decision 0034 defines', async () => {
      const service = await createActiveService(ctx)
      const seller = service.seller
      const buyer = await createFundedBuyer(ctx, 5000)
      const ratings = [5, 5, 4]
      for (const rating of ratings) await reviewBoth(await orderIn(ctx, 'completed', { service, buyer }), rating, 4)
      await review(buyer.accessToken, { orderId: (await orderIn(ctx, 'completed', { service, buyer })).orderId, rating: 1 })
      await orderIn(ctx, 'cancelled', { service, buyer })
      await orderIn(ctx, 'pending', { service, buyer })

      const profile = (await request(ctx.app, { method: 'GET', url: `/users/${seller.user.id}` })).json().data
      expect(profile.stats).toEqual({ servicesCount: 1, completedOrdersCount: 4, averageRating: 4.67, reviewsCount: 3 })
      expect(profile).toMatchObject({ sellerLevel: 'new', buyerRating: 0, buyerReviewsCount: 0 })
      expect((await request(ctx.app, { method: 'GET', url: `/users/${buyer.user.id}` })).json().data).toMatchObject({ buyerRating: 4, buyerReviewsCount: 3 })
      const stats = await request(ctx.app, { method: 'GET', url: `/users/${seller.user.id}/stats` })
      expect(stats.statusCode).toBe(200)
      expect(stats.json().data).toEqual({
        totalServices: 1,
        activeServices: 1,
        averageServicePrice: 100,
        totalOrders: 6,
        completedOrders: 4,
        completionRate: 80,
        onTimeDeliveryRate: 100,
        totalReviews: 3,
        averageRating: 4.67,
        ratingDistribution: { 5: 2, 4: 1, 3: 0, 2: 0, 1: 0 },
        memberSince: seller.user.createdAt.toISOString(),
        lastLogin: null,
        isKYCVerified: false,
        sellerLevel: 'new',
        levelEvaluatedAt: null,
      })
      const newcomer = await createUser(ctx)
      expect((await request(ctx.app, { method: 'GET', url: `/users/${newcomer.user.id}/stats` })).json().data).toMatchObject({ completionRate: 0, onTimeDeliveryRate: 0, averageRating: 0, totalOrders: 0 })
      expectError(await request(ctx.app, { method: 'GET', url: `/users/${(await createUser(ctx, { isActive: false })).user.id}/stats` }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: '/users/nope/stats' }), 404, 'NOT_FOUND')
    })
  })
})
