import { sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createActiveService, deliver, moveOrder, placeOrder, renewSessions, type ActiveService } from '../../../test/factories/orders.ts'
import { answerRequest, openRequest } from '../../../test/factories/requests.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { rowsOf } from '../../db/client.ts'
import { DAY } from '../../lib/clock.ts'

/** The kept figures of a seller (seller-order-figures.sql) against the same figures counted from the rows. */
describe('seller order figures, kept by triggers', () => {
  let ctx: TestContext
  let arbiter: TestUser
  let service: ActiveService
  beforeAll(async () => {
    ctx = await createTestApp({ env: { PLATFORM_FEE_PERCENT: '10' } })
    arbiter = await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] })
    service = await createActiveService(ctx)
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const kept = () => ctx.app.container.orders.sellerOrderFigures(ctx.database.db, service.seller.user.id)
  /** Counted from the orders and their deliveries: what the statistics aggregated before the figures were kept. */
  async function counted() {
    const [row] = await rowsOf<{ orders: number; completed: number; cancelled: number }>(ctx.database.db, sql`
      select count(*)::int as orders, (count(*) filter (where o.status = 'completed'))::int as completed, (count(*) filter (where o.status = 'cancelled'))::int as cancelled
      from orders o where o.seller_id = ${service.seller.user.id}`)
    const performance = (await ctx.app.container.orders.sellerPerformance(ctx.database.db, [service.seller.user.id], ctx.clock.now())).get(service.seller.user.id)
    return { ...row!, delivered: performance?.lifetime.delivered ?? 0, onTime: performance?.lifetime.onTime ?? 0 }
  }
  const expectKept = async (figures: { orders: number; completed: number; cancelled: number; delivered: number; onTime: number }) => {
    expect(await counted()).toEqual(figures)
    expect(await kept()).toEqual(figures)
  }
  const renew = () => renewSessions(ctx, service.seller, arbiter)

  it('count every order from its placement, whatever its status, and are zeros for a seller without orders', async () => {
    expect(await kept()).toEqual({ orders: 0, completed: 0, cancelled: 0, delivered: 0, onTime: 0 })
    const pending = await placeOrder(ctx, { service })
    await expectKept({ orders: 1, completed: 0, cancelled: 0, delivered: 0, onTime: 0 })
    await moveOrder(ctx, pending.buyer.accessToken, pending.orderId, 'cancelled', 'Changed my mind about this order.')
    await expectKept({ orders: 1, completed: 0, cancelled: 1, delivered: 0, onTime: 0 })
  })

  it('count a first delivery by its due time as on time, a later one as delivered only, and a completion', async () => {
    const onTime = await placeOrder(ctx, { service })
    await moveOrder(ctx, service.seller.accessToken, onTime.orderId, 'in_progress')
    expect((await deliver(ctx, service.seller.accessToken, onTime.orderId)).statusCode).toBe(200)
    await expectKept({ orders: 2, completed: 0, cancelled: 1, delivered: 1, onTime: 1 })
    // A second delivery after a revision does not count the order again.
    await moveOrder(ctx, onTime.buyer.accessToken, onTime.orderId, 'in_progress')
    expect((await deliver(ctx, service.seller.accessToken, onTime.orderId)).statusCode).toBe(200)
    await moveOrder(ctx, onTime.buyer.accessToken, onTime.orderId, 'completed')
    await expectKept({ orders: 2, completed: 1, cancelled: 1, delivered: 1, onTime: 1 })

    const late = await placeOrder(ctx, { service })
    await moveOrder(ctx, service.seller.accessToken, late.orderId, 'in_progress')
    ctx.clock.advance(10 * DAY)
    await renewSessions(ctx, late.buyer)
    await renew()
    expect((await deliver(ctx, service.seller.accessToken, late.orderId)).statusCode).toBe(200)
    await expectKept({ orders: 3, completed: 1, cancelled: 1, delivered: 2, onTime: 1 })

    // An extension accepted after a revision moves the due time past the first delivery: on time now, as the rows say.
    await moveOrder(ctx, late.buyer.accessToken, late.orderId, 'in_progress')
    const extension = await openRequest(ctx, service.seller.accessToken, late.orderId, { type: 'extension', days: 30 })
    expect((await answerRequest(ctx, late.buyer.accessToken, late.orderId, extension.id, 'accept')).statusCode).toBe(200)
    await expectKept({ orders: 3, completed: 1, cancelled: 1, delivered: 2, onTime: 2 })
  })

  it('leave an order out of the delivered ones while it is in dispute, and count how its resolution ends it', async () => {
    const disputed = await placeOrder(ctx, { service })
    await moveOrder(ctx, service.seller.accessToken, disputed.orderId, 'in_progress')
    expect((await deliver(ctx, service.seller.accessToken, disputed.orderId)).statusCode).toBe(200)
    await expectKept({ orders: 4, completed: 1, cancelled: 1, delivered: 3, onTime: 3 })
    await moveOrder(ctx, disputed.buyer.accessToken, disputed.orderId, 'disputed', 'The files do not open at all, nothing was delivered.')
    await expectKept({ orders: 4, completed: 1, cancelled: 1, delivered: 2, onTime: 2 })
    await renew()
    const resolved = await request(ctx.app, { method: 'POST', url: `/admin/orders/${disputed.orderId}/resolve`, token: arbiter.accessToken, payload: { refundAmount: 10, note: 'Half of the files were usable.' } })
    expect(resolved.statusCode, resolved.body).toBe(200)
    await expectKept({ orders: 4, completed: 2, cancelled: 1, delivered: 3, onTime: 3 })
  })

  it('are what GET /users/{id}/stats answers', async () => {
    const stats = (await request(ctx.app, { method: 'GET', url: `/users/${service.seller.user.id}/stats` })).json().data
    expect(stats).toMatchObject({ totalOrders: 4, completedOrders: 2, completionRate: 66.67, onTimeDeliveryRate: 100 })
  })

  it('follow the other endings: a dispute the buyer wins, a cancellation both agree to, a completion by the worker', async () => {
    await renew()
    const before = await kept()
    const delivered = async (placed: { orderId: string }) => {
      await moveOrder(ctx, service.seller.accessToken, placed.orderId, 'in_progress')
      expect((await deliver(ctx, service.seller.accessToken, placed.orderId)).statusCode).toBe(200)
    }

    const lost = await placeOrder(ctx, { service })
    await delivered(lost)
    await moveOrder(ctx, lost.buyer.accessToken, lost.orderId, 'disputed', 'The files do not open at all, nothing was delivered.')
    await moveOrder(ctx, arbiter.accessToken, lost.orderId, 'cancelled', 'Nothing usable was delivered; the buyer is refunded.')
    expect(await kept()).toEqual(await counted())

    const agreed = await placeOrder(ctx, { service })
    await moveOrder(ctx, service.seller.accessToken, agreed.orderId, 'in_progress')
    const asked = await openRequest(ctx, service.seller.accessToken, agreed.orderId, { type: 'cancellation' })
    expect((await answerRequest(ctx, agreed.buyer.accessToken, agreed.orderId, asked.id, 'accept')).statusCode).toBe(200)
    expect(await kept()).toEqual(await counted())

    const left = await placeOrder(ctx, { service })
    await delivered(left)
    ctx.clock.advance(30 * DAY)
    expect(await ctx.app.container.orders.completeDueOrders()).toBeGreaterThanOrEqual(1)
    expect(await kept()).toEqual(await counted())

    expect(await kept()).toEqual({ orders: before.orders + 3, completed: before.completed + 1, cancelled: before.cancelled + 2, delivered: before.delivered + 2, onTime: before.onTime + 2 })
  })
})
