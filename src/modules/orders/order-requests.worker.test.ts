import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { deliver, orderIn, renewSessions, type PlacedOrder } from '../../../test/factories/orders.ts'
import { answerRequest, openRequest, sendRequest } from '../../../test/factories/requests.ts'
import { createSuperuser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { SECOND } from '../../lib/clock.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { orderRequests } from './order-requests.table.ts'

/** ORDER_REQUEST_DAYS of 0.001 (86.4 seconds) and a worker ticking every 5 seconds: requests nobody answers, through the worker and through the next move. */
describe('order requests nobody answers', () => {
  const WINDOW = 86.4 * SECOND
  let ctx: TestContext
  let admin: TestUser
  beforeAll(async () => {
    ctx = await createTestApp({ env: { ORDER_REQUEST_DAYS: '0.001', WORKER_TICK_SECONDS: '5', ORDER_AUTO_COMPLETE_DAYS: '0.002' } })
    admin = await createSuperuser(ctx)
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const worker = () => ctx.app.container.worker
  const wallet = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number }
  const requestsOf = (orderId: string) => ctx.database.db.select().from(orderRequests).where(eq(orderRequests.orderId, orderId))
  const moneyOf = async (orderId: string) => (await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, orderId))).map((move) => move.type).sort()
  const getOrder = async (placed: PlacedOrder) => (await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.buyer.accessToken })).json().data
  /** Moves the clock and renews the parties' sessions, whose access tokens the move may have expired. */
  async function advance(ms: number, ...placed: PlacedOrder[]) {
    ctx.clock.advance(ms)
    await renewSessions(ctx, ...placed.flatMap((order) => [order.buyer, order.seller]))
  }

  it('runs the settling task every WORKER_TICK_SECONDS', async () => {
    expect(await worker().runPeriodic()).toContain('settle-order-requests')
    ctx.clock.advance(4 * SECOND)
    expect(await worker().runPeriodic()).not.toContain('settle-order-requests')
    ctx.clock.advance(SECOND)
    expect(await worker().runPeriodic()).toContain('settle-order-requests')
  })

  it('the worker expires an extension and a partial refund nobody answered, and accepts a cancellation, each once, with their events and e-mails', async () => {
    const extended = await orderIn(ctx, 'in_progress')
    const refunded = await orderIn(ctx, 'delivered')
    const cancelled = await orderIn(ctx, 'in_progress')
    const dueAt = (await getOrder(extended)).dueAt as string
    const extension = await openRequest(ctx, extended.seller.accessToken, extended.orderId, { type: 'extension', days: 2 })
    const refund = await openRequest(ctx, refunded.seller.accessToken, refunded.orderId, { type: 'partial_refund', amount: 10 })
    const cancellation = await openRequest(ctx, cancelled.buyer.accessToken, cancelled.orderId, { type: 'cancellation' })
    expect(new Date(cancellation.expiresAt).getTime() - new Date(cancellation.createdAt).getTime()).toBe(WINDOW)

    // Not yet: one second before the window closes, the worker leaves them open.
    await advance(WINDOW - SECOND, extended, refunded, cancelled)
    expect(await worker().runPeriodic()).toContain('settle-order-requests')
    expect((await requestsOf(cancelled.orderId)).map((row) => row.status)).toEqual(['open'])

    await advance(5 * SECOND, extended, refunded, cancelled)
    expect(await worker().runPeriodic()).toContain('settle-order-requests')
    expect((await getOrder(extended)).requests).toEqual([{ ...extension, status: 'expired', respondedAt: extension.expiresAt }])
    expect((await getOrder(extended)).dueAt).toBe(dueAt)
    expect((await getOrder(refunded)).requests).toEqual([{ ...refund, status: 'expired', respondedAt: refund.expiresAt }])
    expect(await wallet(refunded.buyer)).toMatchObject({ balance: 400, escrow: 100 })
    const order = await getOrder(cancelled)
    expect(order).toMatchObject({ status: 'cancelled', requests: [{ ...cancellation, status: 'accepted', respondedAt: cancellation.expiresAt }] })
    expect(order.timeline.at(-1)).toMatchObject({ action: 'accept_request', status: 'cancelled', by: 'system' })
    expect(await wallet(cancelled.buyer)).toMatchObject({ balance: 500, escrow: 0 })
    expect(await moneyOf(cancelled.orderId)).toEqual(['order_payment', 'order_refund'])
    // The next ticks find nothing left to settle.
    expect(await ctx.app.container.orders.settleDueRequests()).toBe(0)

    await worker().drain()
    const mailsTo = (user: TestUser) => ctx.mailer.sent.filter((mail) => mail.to === user.user.email).map((mail) => mail.subject)
    expect(mailsTo(cancelled.seller)).toEqual(expect.arrayContaining([expect.stringMatching(/^The buyer asks to cancel the order/), expect.stringMatching(/^Accepted: the cancellation request/)]))
    expect(mailsTo(cancelled.buyer)).toEqual([expect.stringMatching(/^Accepted: the cancellation request/)])
    expect(ctx.mailer.sent.find((mail) => mail.to === cancelled.buyer.user.email)?.text).toContain('as nobody answered it in time')
    expect(mailsTo(extended.buyer)).toEqual([expect.stringMatching(/^The seller asks for 2 more days to deliver/), expect.stringMatching(/^Expired: the request for more time/)])
    expect(mailsTo(refunded.seller)).toEqual([expect.stringMatching(/^Expired: the partial refund offer/)])

    const token = (await ctx.app.container.auth.issueSession(admin.user)).accessToken
    const log = await request(ctx.app, { method: 'GET', url: '/admin/events?limit=100', token })
    const logged = (log.json().data.items as { event: string; data: { requestId?: string } }[]).filter((item) => item.event.startsWith('order.request_')).map((item) => `${item.event} ${item.data.requestId}`)
    expect(logged).toEqual(
      expect.arrayContaining([`order.request_opened ${cancellation.id}`, `order.request_expired ${extension.id}`, `order.request_expired ${refund.id}`, `order.request_accepted ${cancellation.id}`]),
    )
  })

  it('a move that finds the request overdue settles it first: an answer is then 422, a delivery after a cancellation so accepted is 422', async () => {
    const answered = await orderIn(ctx, 'in_progress')
    const late = await openRequest(ctx, answered.seller.accessToken, answered.orderId, { type: 'extension', days: 1 })
    const delivering = await orderIn(ctx, 'in_progress')
    await openRequest(ctx, delivering.buyer.accessToken, delivering.orderId, { type: 'cancellation' })
    await advance(WINDOW, answered, delivering)
    // No worker has run: the moves settle the requests themselves, and that commits.
    expectError(await answerRequest(ctx, answered.buyer.accessToken, answered.orderId, late.id, 'accept'), 422, 'INVALID_TRANSITION')
    expect((await requestsOf(answered.orderId)).map((row) => row.status)).toEqual(['expired'])
    expectError(await deliver(ctx, delivering.seller.accessToken, delivering.orderId), 422, 'INVALID_TRANSITION')
    expect(await getOrder(delivering)).toMatchObject({ status: 'cancelled', requests: [{ status: 'accepted' }], deliveries: [] })
    expect(await wallet(delivering.buyer)).toMatchObject({ balance: 500, escrow: 0 })
    // A new request after an expired one is made as usual.
    expect((await sendRequest(ctx, answered.seller.accessToken, answered.orderId, { type: 'extension', reason: 'Still waiting on the printer proofs.', days: 1 })).statusCode).toBe(201)
  })

  it('auto-completion settles an overdue request first: a cancellation wins over the completion, an offer expires and the order completes', async () => {
    const toCancel = await orderIn(ctx, 'delivered')
    await openRequest(ctx, toCancel.buyer.accessToken, toCancel.orderId, { type: 'cancellation' })
    const toComplete = await orderIn(ctx, 'delivered')
    await openRequest(ctx, toComplete.seller.accessToken, toComplete.orderId, { type: 'partial_refund', amount: 10 })
    // Past both the request window and ORDER_AUTO_COMPLETE_DAYS after the delivery.
    await advance(2 * WINDOW, toCancel, toComplete)
    expect(await ctx.app.container.orders.completeDueOrders()).toBeGreaterThanOrEqual(2)
    expect(await getOrder(toCancel)).toMatchObject({ status: 'cancelled', requests: [{ status: 'accepted' }] })
    expect(await moneyOf(toCancel.orderId)).toEqual(['order_payment', 'order_refund'])
    expect(await getOrder(toComplete)).toMatchObject({ status: 'completed', requests: [{ status: 'expired' }] })
    expect(await wallet(toComplete.seller)).toMatchObject({ balance: 90, escrow: 0 })
    expect(await wallet(toComplete.buyer)).toMatchObject({ balance: 400, escrow: 0 })
  })
})
