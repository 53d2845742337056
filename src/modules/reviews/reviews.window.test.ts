import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { eventsNamed } from '../../../test/factories/events.ts'
import { orderIn, renewSessions, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY, MINUTE, SECOND } from '../../lib/clock.ts'
import { orders } from '../orders/orders.table.ts'
import { reviews } from './reviews.table.ts'

/** Reviews are blind until both parties wrote theirs or the window (here half a day: REVIEW_WINDOW_DAYS accepts fractions) has passed. */
describe('blind reviews and their window', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { REVIEW_WINDOW_DAYS: '0.5' } })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const review = (token: string, payload: Record<string, unknown>) => request(ctx.app, { method: 'POST', url: '/reviews', token, payload })
  const getReview = (id: string, token?: string) => request(ctx.app, { method: 'GET', url: `/reviews/${id}`, token })
  const orderReviews = (orderId: string, token?: string) => request(ctx.app, { method: 'GET', url: `/orders/${orderId}/reviews`, token })
  const serviceRating = async (serviceId: string) => (await request(ctx.app, { method: 'GET', url: `/services/${serviceId}` })).json().data.rating as { average: number; count: number }
  const sellerStats = async (order: PlacedOrder) => (await request(ctx.app, { method: 'GET', url: `/users/${order.seller.user.id}/stats` })).json().data as { totalReviews: number; averageRating: number }
  const completedAtOf = async (orderId: string) => (await ctx.database.db.select().from(orders).where(eq(orders.id, orderId)))[0]!.completedAt!

  it('shows a hidden review whole to its author, as existing only to the other party, and not at all to anyone else', async () => {
    const order = await orderIn(ctx, 'completed')
    const stranger = await createUser(ctx)
    const written = await review(order.buyer.accessToken, { orderId: order.orderId, rating: 2, comment: 'The colours were off', criteria: { communication: 2, quality: 2, delivery: 3 } })
    expect(written.statusCode, written.body).toBe(201)
    const { id } = written.json().data

    const byAuthor = await getReview(id, order.buyer.accessToken)
    expect(byAuthor.statusCode).toBe(200)
    expect(byAuthor.json().data).toMatchObject({ id, status: 'hidden', rating: 2, comment: 'The colours were off', publishedAt: null })
    const byOtherParty = await getReview(id, order.seller.accessToken)
    expect(byOtherParty.statusCode).toBe(200)
    expect(Object.keys(byOtherParty.json().data).sort()).toEqual(['authorRole', 'createdAt', 'id', 'orderId', 'reviewer', 'status', 'subject'])
    expect(byOtherParty.json().data).toMatchObject({ id, orderId: order.orderId, authorRole: 'buyer', status: 'hidden', reviewer: { id: order.buyer.user.id } })
    expect(byOtherParty.body).not.toContain('colours')
    expectError(await getReview(id, stranger.accessToken), 404, 'NOT_FOUND')
    expectError(await getReview(id), 404, 'NOT_FOUND')

    const completedAt = await completedAtOf(order.orderId)
    const buyerSide = (await orderReviews(order.orderId, order.buyer.accessToken)).json().data
    expect(buyerSide).toMatchObject({ buyerReview: { id, rating: 2 }, sellerReview: null, canReview: false, windowClosesAt: new Date(completedAt.getTime() + DAY / 2).toISOString() })
    const sellerSide = await orderReviews(order.orderId, order.seller.accessToken)
    expect(sellerSide.statusCode).toBe(200)
    expect(sellerSide.json().data).toMatchObject({ buyerReview: { id, status: 'hidden' }, sellerReview: null, canReview: true })
    expect(sellerSide.json().data.buyerReview).not.toHaveProperty('rating')
    expectError(await orderReviews(order.orderId, stranger.accessToken), 404, 'NOT_FOUND')
    expectError(await orderReviews(order.orderId), 401, 'UNAUTHENTICATED')
    expect((await request(ctx.app, { method: 'GET', url: `/services/${order.serviceId}/reviews` })).json().data.items).toEqual([])
    expect((await request(ctx.app, { method: 'GET', url: `/users/${order.seller.user.id}/reviews` })).json().data.items).toEqual([])
    expect(await serviceRating(order.serviceId)).toEqual({ average: 0, count: 0 })
    expect(await sellerStats(order)).toMatchObject({ totalReviews: 0, averageRating: 0 })

    // The seller's review makes both public: everyone sees both, and they count.
    const bySeller = (await review(order.seller.accessToken, { orderId: order.orderId, rating: 5, comment: 'Clear brief' })).json().data
    for (const token of [undefined, stranger.accessToken, order.seller.accessToken]) {
      expect((await getReview(id, token)).json().data).toMatchObject({ id, status: 'published', rating: 2, comment: 'The colours were off' })
    }
    expect((await getReview(bySeller.id)).json().data).toMatchObject({ status: 'published', rating: 5, authorRole: 'seller' })
    expect((await orderReviews(order.orderId, order.buyer.accessToken)).json().data).toMatchObject({ buyerReview: { status: 'published' }, sellerReview: { rating: 5 }, canReview: false })
    expect(await serviceRating(order.serviceId)).toEqual({ average: 2, count: 1 })
    expect(await sellerStats(order)).toMatchObject({ totalReviews: 1, averageRating: 2 })
    expect((await request(ctx.app, { method: 'GET', url: `/users/${order.buyer.user.id}` })).json().data).toMatchObject({ buyerRating: 5, buyerReviewsCount: 1 })
    expectError(await getReview('01890000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND')
  })

  it('publishes lone reviews once their window has passed, each once whoever publishes it, and refuses new reviews then', async () => {
    const order = await orderIn(ctx, 'completed')
    const late = await orderIn(ctx, 'completed')
    const { id } = (await review(order.buyer.accessToken, { orderId: order.orderId, rating: 4 })).json().data
    const completedAt = await completedAtOf(order.orderId)
    const { reviews: api } = ctx.app.container

    ctx.clock.set(new Date(completedAt.getTime() + DAY / 2 - SECOND))
    await renewSessions(ctx, order.buyer, order.seller, late.buyer, late.seller)
    expect(await api.publishDueReviews()).toBe(0)
    expect((await getReview(id)).statusCode).toBe(404)
    // Just inside the window a review is still accepted (and stays hidden: the other party has not written).
    const lastMinute = await review(late.seller.accessToken, { orderId: late.orderId, rating: 5 })
    expect(lastMinute.statusCode, lastMinute.body).toBe(201)
    expect(lastMinute.json().data.status).toBe('hidden')

    ctx.clock.advance(SECOND)
    expectError(await review(order.seller.accessToken, { orderId: order.orderId, rating: 5 }), 422, 'REVIEW_WINDOW_CLOSED')
    expect((await orderReviews(order.orderId, order.seller.accessToken)).json().data.canReview).toBe(false)
    // Two publishers at once: each due review (this one, and the late seller's, whose window closed with it) is published by one of them.
    const counts = await Promise.all([api.publishDueReviews(), api.publishDueReviews()])
    expect(counts[0] + counts[1]).toBe(2)
    expect(await api.publishDueReviews()).toBe(0)
    expect((await getReview(id)).json().data).toMatchObject({ status: 'published', rating: 4 })
    expect(await serviceRating(order.serviceId)).toEqual({ average: 4, count: 1 })
    expect(await sellerStats(order)).toMatchObject({ totalReviews: 1, averageRating: 4 })
    expect((await request(ctx.app, { method: 'GET', url: `/users/${late.buyer.user.id}` })).json().data).toMatchObject({ buyerRating: 5, buyerReviewsCount: 1 })
    const lateReview = (await ctx.database.db.select().from(reviews).where(eq(reviews.orderId, late.orderId)))[0]!
    const published = await eventsNamed(ctx, 'review.published')
    expect(published.filter((data) => data.reviewId === id)).toEqual([{ reviewId: id, orderId: order.orderId, authorId: order.buyer.user.id, subjectId: order.seller.user.id }])
    expect(published.filter((data) => data.reviewId === lateReview.id)).toEqual([{ reviewId: lateReview.id, orderId: late.orderId, authorId: late.seller.user.id, subjectId: late.buyer.user.id }])
  })

  it('the worker publishes due reviews every WORKER_TICK_SECONDS, driven by the clock', async () => {
    const { worker } = ctx.app.container
    const order = await orderIn(ctx, 'completed')
    const { id } = (await review(order.buyer.accessToken, { orderId: order.orderId, rating: 3 })).json().data
    ctx.clock.advance(DAY / 2 - SECOND)
    expect(await worker.runPeriodic()).toContain('publish-due-reviews')
    expect((await getReview(id)).statusCode).toBe(404)
    ctx.clock.advance(SECOND)
    expect(await worker.runPeriodic()).not.toContain('publish-due-reviews')
    expect((await getReview(id)).statusCode).toBe(404)
    ctx.clock.advance(MINUTE)
    expect(await worker.runPeriodic()).toContain('publish-due-reviews')
    expect((await getReview(id)).json().data).toMatchObject({ status: 'published', rating: 3 })
    expect((await eventsNamed(ctx, 'review.published')).filter((data) => data.reviewId === id)).toHaveLength(1)
  })
})
