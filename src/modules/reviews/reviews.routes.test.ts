import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
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

  describe('POST /reviews', () => {
    let completed: PlacedOrder
    beforeAll(async () => {
      completed = await orderIn(ctx, 'completed')
    })

    it('lets the buyer review a completed order once, and folds the rating into the service and the seller', async () => {
      const response = await review(completed.buyer.accessToken, { orderId: completed.orderId, rating: 4, comment: 'Great logo', criteria: { communication: 5, quality: 4, delivery: 3 } })
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json().data).toMatchObject({
        orderId: completed.orderId,
        serviceId: completed.serviceId,
        rating: 4,
        comment: 'Great logo',
        criteria: { communication: 5, quality: 4, delivery: 3 },
        reviewer: { id: completed.buyer.user.id, username: completed.buyer.user.username },
        reply: null,
      })
      expect(response.json().data.reviewer).not.toHaveProperty('email')
      const service = (await request(ctx.app, { method: 'GET', url: `/services/${completed.serviceId}` })).json().data
      expect(service.rating).toEqual({ average: 4, count: 1 })
      expect(service.ordersCount).toBe(1)
      expectError(await review(completed.buyer.accessToken, { orderId: completed.orderId, rating: 5 }), 422, 'ALREADY_REVIEWED')
    })

    it('bad input: the seller, an uncompleted order, a stranger, ratings out of range: a 4xx and nothing written', async () => {
      const before = (await ctx.database.db.select().from(reviews)).length
      const other = await orderIn(ctx, 'completed')
      expectError(await review(other.seller.accessToken, { orderId: other.orderId, rating: 5 }), 422, 'NOT_REVIEWABLE')
      const delivered = await orderIn(ctx, 'delivered')
      expectError(await review(delivered.buyer.accessToken, { orderId: delivered.orderId, rating: 5 }), 422, 'NOT_REVIEWABLE')
      expectError(await review((await createUser(ctx)).accessToken, { orderId: other.orderId, rating: 5 }), 404, 'NOT_FOUND')
      expectError(await review(other.buyer.accessToken, { orderId: '01890000-0000-7000-8000-000000000000', rating: 5 }), 404, 'NOT_FOUND')
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 0 }), 400, 'VALIDATION_ERROR', ['rating'])
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 6 }), 400, 'VALIDATION_ERROR', ['rating'])
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 4.5 }), 400, 'VALIDATION_ERROR', ['rating'])
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 5, criteria: { communication: 7, quality: 5, delivery: 5 } }), 400, 'VALIDATION_ERROR', ['criteria.communication'])
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 5, criteria: { quality: 5 } }), 400, 'VALIDATION_ERROR')
      expectError(await review(other.buyer.accessToken, { orderId: other.orderId, rating: 5, comment: 'x'.repeat(2001) }), 400, 'VALIDATION_ERROR', ['comment'])
      expectError(await review(other.buyer.accessToken, { rating: 5 }), 400, 'VALIDATION_ERROR', ['orderId'])
      expectError(await review(undefined, { orderId: other.orderId, rating: 5 }), 401, 'UNAUTHENTICATED')
      expect((await ctx.database.db.select().from(reviews)).length).toBe(before)
    })

    it('two reviews of one order at once: one is written, the other is 422 ALREADY_REVIEWED', async () => {
      const order = await orderIn(ctx, 'completed')
      const answers = await Promise.all([review(order.buyer.accessToken, { orderId: order.orderId, rating: 5 }), review(order.buyer.accessToken, { orderId: order.orderId, rating: 1 })])
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 422])
      const service = (await request(ctx.app, { method: 'GET', url: `/services/${order.serviceId}` })).json().data
      expect(service.rating.count).toBe(1)
    })
  })

  describe('POST /reviews/{id}/reply', () => {
    it('lets the reviewed seller reply once; anyone else gets 404', async () => {
      const order = await orderIn(ctx, 'completed')
      const created = (await review(order.buyer.accessToken, { orderId: order.orderId, rating: 3 })).json().data
      const reply = (token: string, text = 'Thanks!') => request(ctx.app, { method: 'POST', url: `/reviews/${created.id}/reply`, token, payload: { reply: text } })
      expectError(await reply(order.buyer.accessToken), 404, 'NOT_FOUND')
      expectError(await reply((await createUser(ctx)).accessToken), 404, 'NOT_FOUND')
      expectError(await reply(order.seller.accessToken, '  '), 400, 'VALIDATION_ERROR', ['reply'])
      const first = await reply(order.seller.accessToken)
      expect(first.statusCode, first.body).toBe(200)
      expect(first.json().data.reply).toMatchObject({ text: 'Thanks!' })
      expectError(await reply(order.seller.accessToken, 'Again'), 422, 'ALREADY_REPLIED')
    })
  })

  describe('GET /services/{id}/reviews', () => {
    it('lists reviews newest first, 10 per page by default, with the reviewer’s public fields; an unknown service is 404', async () => {
      const service = await createActiveService(ctx)
      const buyer = await createFundedBuyer(ctx, 5000)
      for (let index = 0; index < 11; index++) {
        const order = await orderIn(ctx, 'completed', { service, buyer })
        await review(buyer.accessToken, { orderId: order.orderId, rating: (index % 5) + 1, comment: `review ${index}` })
      }
      const page = await request(ctx.app, { method: 'GET', url: `/services/${service.serviceId}/reviews` })
      expect(page.statusCode).toBe(200)
      const data = page.json().data
      expect(data.pagination).toMatchObject({ page: 1, limit: 10, total: 11, pages: 2, hasNext: true })
      expect(data.items[0].comment).toBe('review 10')
      expect(Object.keys(data.items[0].reviewer).sort()).toEqual(['avatar', 'fullName', 'id', 'username'])
      const rated = (await request(ctx.app, { method: 'GET', url: `/services/${service.serviceId}` })).json().data.rating
      expect(rated.count).toBe(11)
      expect(rated.average).toBeCloseTo(31 / 11, 10)
      expectError(await request(ctx.app, { method: 'GET', url: '/services/01890000-0000-7000-8000-000000000000/reviews' }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: `/services/${service.serviceId}/reviews?limit=101` }), 400, 'VALIDATION_ERROR', ['limit'])

      const sorted = await request(ctx.app, { method: 'GET', url: `/services?sortBy=rating&sortOrder=desc&sellerId=${service.seller.user.id}` })
      expect(sorted.json().data.items[0].rating.count).toBe(11)
    })
  })

  describe('statistics', () => {
    it('the public profile and GET /users/{id}/stats count services, orders and reviews as decision 0034 defines', async () => {
      const service = await createActiveService(ctx)
      const seller = service.seller
      const buyer = await createFundedBuyer(ctx, 5000)
      const ratings = [5, 5, 4]
      for (const rating of ratings) {
        const order = await orderIn(ctx, 'completed', { service, buyer })
        await review(buyer.accessToken, { orderId: order.orderId, rating })
      }
      await orderIn(ctx, 'cancelled', { service, buyer })
      await orderIn(ctx, 'pending', { service, buyer })

      const profile = (await request(ctx.app, { method: 'GET', url: `/users/${seller.user.id}` })).json().data
      expect(profile.stats).toEqual({ servicesCount: 1, completedOrdersCount: 3, averageRating: 4.67, reviewsCount: 3 })
      const stats = await request(ctx.app, { method: 'GET', url: `/users/${seller.user.id}/stats` })
      expect(stats.statusCode).toBe(200)
      expect(stats.json().data).toEqual({
        totalServices: 1,
        activeServices: 1,
        averageServicePrice: 100,
        totalOrders: 5,
        completedOrders: 3,
        completionRate: 75,
        totalReviews: 3,
        averageRating: 4.67,
        ratingDistribution: { 5: 2, 4: 1, 3: 0, 2: 0, 1: 0 },
        memberSince: seller.user.createdAt.toISOString(),
        lastLogin: null,
        isKYCVerified: false,
      })
      const newcomer = await createUser(ctx)
      expect((await request(ctx.app, { method: 'GET', url: `/users/${newcomer.user.id}/stats` })).json().data).toMatchObject({ completionRate: 0, averageRating: 0, totalOrders: 0 })
      expectError(await request(ctx.app, { method: 'GET', url: `/users/${(await createUser(ctx, { isActive: false })).user.id}/stats` }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: '/users/nope/stats' }), 404, 'NOT_FOUND')
    })
  })
})
