import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MB, opaqueBytes } from '../../../test/factories/files.ts'
import { createActiveService, createFundedBuyer, deliver, moveOrder, orderIn, placeOrder, renewSessions } from '../../../test/factories/orders.ts'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY, HOUR } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { uploads } from '../uploads/uploads.table.ts'
import { orders } from './orders.table.ts'

const wallet = async (ctx: TestContext, token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data as { balance: number; escrow: number }
const eventsFor = async (ctx: TestContext, orderId: string) =>
  (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event')))
    .map((row) => row.payload as { event: string; data: { orderId?: string; automatic?: boolean } })
    .filter((payload) => payload.data.orderId === orderId)

describe('orders: delivery, revisions, completion and time', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { PLATFORM_FEE_PERCENT: '10', ORDER_AUTO_COMPLETE_DAYS: '3' } })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  it('accepting sets the due date from the package and extras; late once past it while in progress', async () => {
    const service = await createActiveService(ctx)
    const placed = await placeOrder(ctx, { service, extras: [service.extraIds.source] })
    const accepted = await moveOrder(ctx, placed.seller.accessToken, placed.orderId, 'in_progress')
    expect(accepted.dueAt).toBe(new Date(ctx.clock.now().getTime() + 4 * DAY).toISOString())
    expect(accepted.late).toBe(false)
    ctx.clock.advance(4 * DAY + HOUR)
    await renewSessions(ctx, placed.buyer, placed.seller)
    const late = await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.buyer.accessToken })
    expect(late.json().data.late).toBe(true)
    const delivered = await deliver(ctx, placed.seller.accessToken, placed.orderId)
    expect(delivered.json().data.late).toBe(false)
  })

  it('records a delivery with its files, private to the parties and staff with view_orders', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    const response = await deliver(ctx, placed.seller.accessToken, placed.orderId, [
      { filename: 'logo.txt', content: Buffer.from('logo') },
      { filename: '../../etc/passwd', content: Buffer.from('second file') },
    ])
    expect(response.statusCode, response.body).toBe(200)
    const order = response.json().data
    expect(order.status).toBe('delivered')
    expect(order.autoCompleteAt).toBe(new Date(ctx.clock.now().getTime() + 3 * DAY).toISOString())
    expect(order.deliveries).toHaveLength(1)
    expect(order.deliveries[0]).toMatchObject({ message: 'Here is your logo' })
    expect(order.deliveries[0].files.map((file: { filename: string }) => file.filename)).toEqual(['logo.txt', 'passwd'])
    const url = new URL(order.deliveries[0].files[0].url as string)
    expect(url.searchParams.get('signature')).toBeTruthy()
    const path = url.pathname.replace(/^\/api\/v1/, '')
    expect(path).toMatch(new RegExp(`^/uploads/order/${placed.orderId}/order_delivery/`))

    const read = (token?: string) => request(ctx.app, { method: 'GET', url: path, token })
    expect((await read(placed.buyer.accessToken)).body).toBe('logo')
    expect((await read(placed.seller.accessToken)).statusCode).toBe(200)
    expect((await read((await createUser(ctx, { permissions: ['view_orders'] })).accessToken)).statusCode).toBe(200)
    expectError(await read((await createUser(ctx)).accessToken), 404, 'NOT_FOUND')
    expectError(await read((await createUser(ctx, { permissions: ['manage_orders'] })).accessToken), 404, 'NOT_FOUND')
    expectError(await read(), 404, 'NOT_FOUND')
    expect((await request(ctx.app, { method: 'GET', url: `${path}${url.search}` })).statusCode).toBe(200)
    expect(await eventsFor(ctx, placed.orderId)).toEqual(expect.arrayContaining([expect.objectContaining({ event: 'order.delivered' })]))
  })

  describe('bad deliveries: a 4xx naming the field, nothing changed', () => {
    it('no files, an 11 MB file, no message, the buyer, a stranger, a pending order', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const token = placed.seller.accessToken
      expectError(await deliver(ctx, token, placed.orderId, []), 400, 'VALIDATION_ERROR', ['files'])
      expectError(await deliver(ctx, token, placed.orderId, [{ filename: 'big.bin', content: opaqueBytes(11 * MB) }]), 400, 'VALIDATION_ERROR', ['files'])
      expectError(await deliver(ctx, token, placed.orderId, undefined, null), 400, 'VALIDATION_ERROR', ['message'])
      expectError(await deliver(ctx, token, placed.orderId, undefined, '   '), 400, 'VALIDATION_ERROR', ['message'])
      expectError(await deliver(ctx, token, placed.orderId, undefined, 'x'.repeat(1001)), 400, 'VALIDATION_ERROR', ['message'])
      expectError(await deliver(ctx, placed.buyer.accessToken, placed.orderId), 422, 'INVALID_TRANSITION')
      expectError(await deliver(ctx, (await createUser(ctx)).accessToken, placed.orderId), 404, 'NOT_FOUND')
      const pending = await placeOrder(ctx)
      expectError(await deliver(ctx, pending.seller.accessToken, pending.orderId), 422, 'INVALID_TRANSITION')
      const after = await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token })
      expect(after.json().data).toMatchObject({ status: 'in_progress', deliveries: [] })
      expect(await ctx.database.db.select().from(uploads).where(eq(uploads.objectId, placed.orderId))).toEqual([])
    })
  })

  it('counts revisions against the package and refuses one more (422); a redelivery restarts the auto-complete clock', async () => {
    const placed = await orderIn(ctx, 'delivered')
    const { buyer, seller, orderId } = placed
    expect((await moveOrder(ctx, buyer.accessToken, orderId, 'in_progress')).revisionsLeft).toBe(1)
    ctx.clock.advance(DAY)
    await renewSessions(ctx, buyer, seller)
    expect((await deliver(ctx, seller.accessToken, orderId)).json().data.autoCompleteAt).toBe(new Date(ctx.clock.now().getTime() + 3 * DAY).toISOString())
    expect((await moveOrder(ctx, buyer.accessToken, orderId, 'in_progress')).revisionsLeft).toBe(0)
    const second = await deliver(ctx, seller.accessToken, orderId)
    expect(second.json().data.deliveries).toHaveLength(3)
    expect(second.json().data.allowedActions).toEqual(expect.not.arrayContaining([expect.objectContaining({ action: 'request_revision' })]))
    expectError(await request(ctx.app, { method: 'PUT', url: `/orders/${orderId}/status`, token: buyer.accessToken, payload: { status: 'in_progress' } }), 422, 'INVALID_TRANSITION')
  })

  it('completion pays the seller minus the fee (half-up) and the platform its fee, once, and counts the order on the service', async () => {
    const service = await createActiveService(ctx)
    const buyer = await createFundedBuyer(ctx, 500)
    const placed = await orderIn(ctx, 'delivered', { service, buyer })
    expect(placed.order).toMatchObject({ total: 100, platformFee: 10, sellerEarning: 90 })
    const completed = await moveOrder(ctx, buyer.accessToken, placed.orderId, 'completed')
    // No more moves: only the tip the buyer may give.
    expect(completed).toMatchObject({ status: 'completed', allowedActions: [{ action: 'tip', status: 'completed', reasonRequired: false }] })
    expect(await wallet(ctx, placed.seller.accessToken)).toMatchObject({ balance: 90, escrow: 0 })
    expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 400, escrow: 0 })
    const statement = (await request(ctx.app, { method: 'GET', url: '/wallet/transactions', token: placed.seller.accessToken })).json().data.items
    expect(statement[0]).toMatchObject({ type: 'order_earning', amount: 90, orderId: placed.orderId })
    const events = (await eventsFor(ctx, placed.orderId)).filter((event) => event.event === 'order.completed')
    expect(events).toEqual([expect.objectContaining({ data: expect.objectContaining({ orderId: placed.orderId, automatic: false }) })])
    expect((await request(ctx.app, { method: 'GET', url: `/services/${service.serviceId}` })).json().data.ordersCount).toBe(1)
  })

  it('the worker completes a delivered order ORDER_AUTO_COMPLETE_DAYS after the latest delivery, and not before', async () => {
    const placed = await orderIn(ctx, 'delivered')
    const { orders: api } = ctx.app.container
    ctx.clock.advance(3 * DAY - HOUR)
    await api.completeDueOrders()
    expect((await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId)))[0]!.status).toBe('delivered')
    ctx.clock.advance(2 * HOUR)
    await renewSessions(ctx, placed.buyer, placed.seller)
    expect(await api.completeDueOrders()).toBeGreaterThanOrEqual(1)
    const order = (await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.buyer.accessToken })).json().data
    expect(order).toMatchObject({ status: 'completed', autoCompleteAt: null })
    expect(await wallet(ctx, placed.seller.accessToken)).toMatchObject({ balance: 90 })
    const completed = (await eventsFor(ctx, placed.orderId)).filter((event) => event.event === 'order.completed')
    expect(completed).toEqual([expect.objectContaining({ data: expect.objectContaining({ automatic: true }) })])
  })

  it('a disputed order is not auto-completed; staff resolve it to completed or cancelled', async () => {
    const first = await orderIn(ctx, 'delivered')
    await moveOrder(ctx, first.buyer.accessToken, first.orderId, 'disputed', 'Not what I asked for')
    ctx.clock.advance(10 * DAY)
    await renewSessions(ctx, first.buyer, first.seller)
    await ctx.app.container.orders.completeDueOrders()
    const resolver = await createUser(ctx, { permissions: ['resolve_disputes'] })
    const still = await request(ctx.app, { method: 'GET', url: `/orders/${first.orderId}`, token: first.buyer.accessToken })
    expect(still.json().data).toMatchObject({ status: 'disputed', statusReason: 'Not what I asked for' })
    await moveOrder(ctx, resolver.accessToken, first.orderId, 'cancelled', 'Refund granted')
    expect(await wallet(ctx, first.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })

    const second = await orderIn(ctx, 'disputed')
    await moveOrder(ctx, resolver.accessToken, second.orderId, 'completed')
    expect(await wallet(ctx, second.seller.accessToken)).toMatchObject({ balance: 90 })
  })
})

describe('orders: the platform fee as the placing statement computes it', () => {
  let ctx: TestContext
  beforeAll(async () => {
    // 0.01 % puts the fee of 250.00 exactly on a half cent (2.5 cents).
    ctx = await createTestApp({ env: { PLATFORM_FEE_PERCENT: '0.01' } })
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  it('rounds the fee half-up to the cent and pays the seller the rest at completion', async () => {
    const service = await createActiveService(ctx)
    const buyer = await createFundedBuyer(ctx, 1000)
    const half = await placeOrder(ctx, { service, buyer, package: 'premium' })
    expect(half.order).toMatchObject({ total: 250, platformFee: 0.03, sellerEarning: 249.97 })
    const below = await placeOrder(ctx, { service, buyer, extras: [service.extraIds.express] })
    expect(below.order).toMatchObject({ total: 115.5, platformFee: 0.01, sellerEarning: 115.49 })

    await moveOrder(ctx, service.seller.accessToken, half.orderId, 'in_progress')
    expect((await deliver(ctx, service.seller.accessToken, half.orderId)).statusCode).toBe(200)
    await moveOrder(ctx, buyer.accessToken, half.orderId, 'completed')
    expect(await wallet(ctx, service.seller.accessToken)).toMatchObject({ balance: 249.97, escrow: 0 })
  })
})
