import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { eventsNamed } from '../../../test/factories/events.ts'
import { createActiveService, createFundedBuyer, deliver, moveOrder, placeOrder, renewSessions, type ActiveService } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY, HOUR, MINUTE, SECOND } from '../../lib/clock.ts'
import { orders } from '../orders/orders.table.ts'

/**
 * Seller levels on made-up histories, with thresholds small enough to reach through the API:
 * level_one, level_two and top_rated need 1, 2 and 3 days of age, 2, 3 and 4 completed orders, a
 * rating of 4, 4.5 and 5, 60, 75 and 100 % on time, 50, 75 and 100 % completed.
 */
describe('seller levels', () => {
  let ctx: TestContext
  let arbiter: TestUser
  let manager: TestUser
  beforeAll(async () => {
    ctx = await createTestApp({
      env: {
        SELLER_LEVEL_MIN_ACCOUNT_DAYS: '1,2,3',
        SELLER_LEVEL_MIN_COMPLETED_ORDERS: '2,3,4',
        SELLER_LEVEL_MIN_RATING: '4,4.5,5',
        SELLER_LEVEL_MIN_ON_TIME_PERCENT: '60,75,100',
        SELLER_LEVEL_MIN_COMPLETION_PERCENT: '50,75,100',
      },
    })
    arbiter = await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] })
    manager = await createUser(ctx, { permissions: ['view_users', 'manage_users'] })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const evaluate = (options?: { batchSize?: number }) => ctx.app.container.reviews.evaluateSellerLevels(options)
  const changesOf = (result: { changes: { userId: string }[] }, seller: TestUser) => result.changes.filter((change) => change.userId === seller.user.id)
  const profileOf = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: `/users/${user.user.id}` })).json().data as { sellerLevel: string }
  const statsOf = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: `/users/${user.user.id}/stats` })).json().data as Record<string, unknown>
  /** Moves the clock and gives everyone named fresh sessions (access tokens last 15 minutes). */
  const moveClock = async (to: Date, ...users: TestUser[]) => {
    ctx.clock.set(to)
    await renewSessions(ctx, arbiter, manager, ...users)
  }

  /**
   * One sale of `service` to `buyer`, delivered on time (or `late`, its due time moved before the
   * delivery), and then completed with the buyer's rating made public by the seller's review
   * (`hiddenRating`: left hidden), left delivered, or disputed.
   */
  async function sale(service: ActiveService, buyer: TestUser, options: { rating?: number; hiddenRating?: number; late?: boolean; end?: 'completed' | 'delivered' | 'disputed' }) {
    const { orderId } = await placeOrder(ctx, { service, buyer })
    await moveOrder(ctx, service.seller.accessToken, orderId, 'in_progress')
    if (options.late) await ctx.database.db.update(orders).set({ dueAt: new Date(ctx.clock.now().getTime() - MINUTE) }).where(eq(orders.id, orderId))
    expect((await deliver(ctx, service.seller.accessToken, orderId)).statusCode).toBe(200)
    const end = options.end ?? 'completed'
    if (end === 'disputed') await moveOrder(ctx, buyer.accessToken, orderId, 'disputed', 'The files are not what we agreed')
    if (end !== 'completed') return orderId
    await moveOrder(ctx, buyer.accessToken, orderId, 'completed')
    const rating = options.rating ?? options.hiddenRating
    if (rating !== undefined) expect((await request(ctx.app, { method: 'POST', url: '/reviews', token: buyer.accessToken, payload: { orderId, rating } })).statusCode).toBe(201)
    if (options.rating !== undefined) expect((await request(ctx.app, { method: 'POST', url: '/reviews', token: service.seller.accessToken, payload: { orderId, rating: 5 } })).statusCode).toBe(201)
    return orderId
  }

  let rising: ActiveService
  let buyer: TestUser

  it('promotes a seller at the edges of account age, completed orders and rating; a hidden review counts for nothing', async () => {
    const start = ctx.clock.now()
    rising = await createActiveService(ctx)
    buyer = await createFundedBuyer(ctx, 5000)
    await sale(rising, buyer, { rating: 4 })
    await sale(rising, buyer, { rating: 5 })
    const seller = rising.seller

    await moveClock(new Date(start.getTime() + DAY - SECOND), seller, buyer)
    expect(changesOf(await evaluate(), seller)).toEqual([])
    expect(await statsOf(seller)).toMatchObject({ sellerLevel: 'new', levelEvaluatedAt: ctx.clock.now().toISOString(), onTimeDeliveryRate: 100 })

    // A day old exactly, two completed orders, 4.5 on average: level_one (level_two needs three orders).
    await moveClock(new Date(start.getTime() + DAY), seller, buyer)
    expect(changesOf(await evaluate(), seller)).toEqual([{ userId: seller.user.id, from: 'new', to: 'level_one' }])
    expect(await profileOf(seller)).toMatchObject({ sellerLevel: 'level_one' })
    expect(await statsOf(seller)).toMatchObject({ sellerLevel: 'level_one', levelEvaluatedAt: ctx.clock.now().toISOString() })

    // A third order rated 3 but still hidden: the public rating is still 4.5, level_two's edge.
    const third = await sale(rising, buyer, { hiddenRating: 3 })
    await moveClock(new Date(start.getTime() + 2 * DAY), seller, buyer)
    expect(changesOf(await evaluate(), seller)).toEqual([{ userId: seller.user.id, from: 'level_one', to: 'level_two' }])

    // Once public, the 3 brings the average to 4: under level_two's 4.5, back to level_one.
    expect((await request(ctx.app, { method: 'POST', url: '/reviews', token: seller.accessToken, payload: { orderId: third, rating: 5 } })).statusCode).toBe(201)
    expect(changesOf(await evaluate(), seller)).toEqual([{ userId: seller.user.id, from: 'level_two', to: 'level_one' }])
    expect(changesOf(await evaluate(), seller)).toEqual([])
    expect((await eventsNamed(ctx, 'seller.level_changed')).filter((data) => data.userId === seller.user.id)).toEqual([
      { userId: seller.user.id, from: 'new', to: 'level_one' },
      { userId: seller.user.id, from: 'level_one', to: 'level_two' },
      { userId: seller.user.id, from: 'level_two', to: 'level_one' },
    ])
  })

  it('a suspended seller drops to new at the next evaluation and earns the level back once the suspension is lifted', async () => {
    const seller = rising.seller
    const suspended = await request(ctx.app, { method: 'POST', url: `/admin/users/${seller.user.id}/suspend`, token: manager.accessToken, payload: { reason: 'Fake reviews' } })
    expect(suspended.statusCode, suspended.body).toBe(200)
    expect(changesOf(await evaluate(), seller)).toEqual([{ userId: seller.user.id, from: 'level_one', to: 'new' }])
    expect(changesOf(await evaluate(), seller)).toEqual([])
    expect((await request(ctx.app, { method: 'POST', url: `/admin/users/${seller.user.id}/unsuspend`, token: manager.accessToken })).statusCode).toBe(200)
    expect(changesOf(await evaluate(), seller)).toEqual([{ userId: seller.user.id, from: 'new', to: 'level_one' }])
  })

  it('counts late deliveries and cancellations against a seller, but never lowers a level for an order still in dispute', async () => {
    const start = ctx.clock.now()
    const service = await createActiveService(ctx)
    const seller = service.seller
    await sale(service, buyer, { rating: 5 })
    await sale(service, buyer, { rating: 5, late: true })
    const contested = await sale(service, buyer, { end: 'delivered' })
    await moveClock(new Date(start.getTime() + DAY), seller, buyer)
    // Two of three deliveries on time (66.67 %, over 60 %), both ended orders completed: level_one.
    expect(changesOf(await evaluate(), seller)).toEqual([{ userId: seller.user.id, from: 'new', to: 'level_one' }])
    expect(await statsOf(seller)).toMatchObject({ onTimeDeliveryRate: 66.67, completionRate: 100 })

    // In dispute, the on-time delivery counts in neither part: 1 of 2 is 50 %, under 60 %; the dispute won would keep 66.67 %. No fall.
    await moveOrder(ctx, buyer.accessToken, contested, 'disputed', 'The files are not what we agreed')
    expect(await statsOf(seller)).toMatchObject({ onTimeDeliveryRate: 50 })
    expect(changesOf(await evaluate(), seller)).toEqual([])
    expect(await profileOf(seller)).toMatchObject({ sellerLevel: 'level_one' })

    // Resolved as cancelled, it counts: on time (66.67 %), and one cancellation of three ended orders (66.67 % completed, over 50 %).
    await moveOrder(ctx, arbiter.accessToken, contested, 'cancelled')
    expect(changesOf(await evaluate(), seller)).toEqual([])
    // A second cancellation makes it 2 of 4, 50 %: the edge holds. A third, 2 of 5: under it, down to new.
    for (const expected of [[], [{ userId: seller.user.id, from: 'level_one', to: 'new' }]]) {
      const { orderId } = await placeOrder(ctx, { service, buyer })
      await moveOrder(ctx, buyer.accessToken, orderId, 'cancelled')
      expect(changesOf(await evaluate(), seller)).toEqual(expected)
    }
    expect(await statsOf(seller)).toMatchObject({ completionRate: 40, sellerLevel: 'new' })
  })

  it('is a periodic task of the worker, run every SELLER_LEVEL_EVALUATION_HOURS by the clock, and many sellers in small batches or at once change once each', async () => {
    const start = ctx.clock.now()
    const services = [await createActiveService(ctx), await createActiveService(ctx), await createActiveService(ctx)]
    for (const service of services) {
      await sale(service, buyer, { rating: 5 })
      await sale(service, buyer, { rating: 5 })
    }
    const [first, second, third] = services.map((service) => service.seller) as [TestUser, TestUser, TestUser]
    const { worker } = ctx.app.container
    await moveClock(new Date(start.getTime() + DAY), buyer, first, second, third)
    expect(await worker.runPeriodic()).toContain('evaluate-seller-levels')
    expect(await profileOf(first)).toMatchObject({ sellerLevel: 'level_one' })
    const evaluatedAt = (await statsOf(first)).levelEvaluatedAt
    expect(evaluatedAt).toBe(ctx.clock.now().toISOString())

    await moveClock(new Date(ctx.clock.now().getTime() + 23 * HOUR), buyer, first, second, third)
    expect(await worker.runPeriodic()).not.toContain('evaluate-seller-levels')
    expect((await statsOf(first)).levelEvaluatedAt).toBe(evaluatedAt)
    await moveClock(new Date(ctx.clock.now().getTime() + HOUR), buyer, first, second, third)
    expect(await worker.runPeriodic()).toContain('evaluate-seller-levels')
    expect((await statsOf(first)).levelEvaluatedAt).toBe(ctx.clock.now().toISOString())

    // A third order each, two days old: level_two for all three, evaluated one account per batch and twice at once.
    for (const service of services) await sale(service, buyer, { rating: 5 })
    const [small, other] = await Promise.all([evaluate({ batchSize: 1 }), evaluate()])
    for (const seller of [first, second, third]) {
      expect([...changesOf(small, seller), ...changesOf(other, seller)]).toEqual([{ userId: seller.user.id, from: 'level_one', to: 'level_two' }])
      expect((await eventsNamed(ctx, 'seller.level_changed')).filter((data) => data.userId === seller.user.id)).toHaveLength(2)
    }
  })
})
