import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { moveOrder, orderIn, placeOrder } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { auditLog } from '../audit/audit.table.ts'

/** What staff do to orders is on record (decision 0116), and the orders figures of `GET /admin/stats` follow every move. */
describe('orders: audit rows and statistics', () => {
  let ctx: TestContext
  let manager: TestUser
  let arbiter: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    manager = await createUser(ctx, { permissions: ['view_orders', 'manage_orders'] })
    arbiter = await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const auditOf = (orderId: string) => ctx.database.db.select().from(auditLog).where(eq(auditLog.targetId, orderId))
  const stats = async () => (await request(ctx.app, { method: 'GET', url: '/admin/stats', token: manager.accessToken })).json().data.orders

  it('records a staff cancel through the admin route, with the reason and the request id of the answer', async () => {
    const { orderId } = await placeOrder(ctx)
    const cancelled = await request(ctx.app, { method: 'POST', url: `/admin/orders/${orderId}/cancel`, token: manager.accessToken, payload: { reason: 'Fraudulent listing' } })
    expect(cancelled.statusCode, cancelled.body).toBe(200)
    expect(await auditOf(orderId)).toEqual([
      expect.objectContaining({ action: 'order.cancel', actorId: manager.user.id, targetType: 'order', reason: 'Fraudulent listing', before: { status: 'pending', total: 100 }, after: { status: 'cancelled' }, requestId: cancelled.headers['x-request-id'] }),
    ])
  })

  it('records a staff cancel through the status route too, and writes nothing for a party’s own moves', async () => {
    const { orderId } = await placeOrder(ctx)
    await moveOrder(ctx, manager.accessToken, orderId, 'cancelled', 'Duplicate order')
    expect((await auditOf(orderId)).map((row) => row.action)).toEqual(['order.cancel'])
    const own = await placeOrder(ctx)
    await moveOrder(ctx, own.buyer.accessToken, own.orderId, 'cancelled')
    expect(await auditOf(own.orderId)).toEqual([])
  })

  it('records a dispute resolution, and nothing when the move is refused', async () => {
    const { orderId } = await orderIn(ctx, 'disputed')
    const refused = await request(ctx.app, { method: 'PUT', url: `/orders/${orderId}/status`, token: manager.accessToken, payload: { status: 'completed', reason: 'not mine to decide' } })
    expect(refused.statusCode).toBe(403)
    expect(await auditOf(orderId)).toEqual([])
    await moveOrder(ctx, arbiter.accessToken, orderId, 'completed', 'The delivery matches the brief')
    expect(await auditOf(orderId)).toEqual([
      expect.objectContaining({ action: 'dispute.resolve', actorId: arbiter.user.id, reason: 'The delivery matches the brief', before: { status: 'disputed', total: 100 }, after: { status: 'completed' } }),
    ])
  })

  it('counts orders by status and the gross volume of completed ones, before and after the counters are folded', async () => {
    const before = await stats()
    await placeOrder(ctx)
    await orderIn(ctx, 'in_progress')
    await orderIn(ctx, 'completed')
    await orderIn(ctx, 'cancelled')
    const after = await stats()
    expect(after).toEqual({
      total: before.total + 4,
      byStatus: {
        ...before.byStatus,
        pending: before.byStatus.pending + 1,
        in_progress: before.byStatus.in_progress + 1,
        completed: before.byStatus.completed + 1,
        cancelled: before.byStatus.cancelled + 1,
      },
      grossVolume: before.grossVolume + 100,
    })
    await ctx.app.container.worker.runPeriodic()
    expect(await stats()).toEqual(after)
  })
})
