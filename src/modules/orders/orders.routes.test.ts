import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createActiveService, createFundedBuyer, moveOrder, placeOrder } from '../../../test/factories/orders.ts'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { servicePackages } from '../catalogue/services.table.ts'
import { conversations } from '../messaging/messaging.table.ts'
import { orders } from './orders.table.ts'

const wallet = async (ctx: TestContext, token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data as { balance: number; escrow: number }

const eventsNamed = async (ctx: TestContext, name: string) =>
  (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))).map((row) => row.payload as { event: string; data: Record<string, unknown> }).filter((payload) => payload.event === name)

describe('orders: placing, reading, staff', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  describe('POST /orders', () => {
    it('prices the package and extras, moves the total into escrow and answers the order with its moves', async () => {
      const service = await createActiveService(ctx)
      const buyer = await createFundedBuyer(ctx, 500)
      const response = await request(ctx.app, {
        method: 'POST',
        url: '/orders',
        token: buyer.accessToken,
        payload: { serviceId: service.serviceId, packageId: service.packageIds.basic, extras: [service.extraIds.source, service.extraIds.express], requirements: 'Blue and gold' },
      })
      expect(response.statusCode, response.body).toBe(201)
      const order = response.json().data
      expect(order).toMatchObject({
        serviceId: service.serviceId,
        packageId: service.packageIds.basic,
        packageName: 'Basic',
        status: 'pending',
        requirements: 'Blue and gold',
        price: 100,
        total: 135.5,
        platformFee: 13.55,
        sellerEarning: 121.95,
        deliveryDays: 4,
        dueAt: null,
        late: false,
        revisionsLeft: 2,
        deliveries: [],
        buyer: { id: buyer.user.id, username: buyer.user.username },
        seller: { id: service.seller.user.id },
      })
      expect(order.extras).toEqual([
        { id: service.extraIds.source, title: 'Source files', price: 20, additionalDays: 1 },
        { id: service.extraIds.express, title: 'Express', price: 15.5, additionalDays: 0 },
      ])
      expect(order.buyer).not.toHaveProperty('email')
      expect(order.allowedActions).toEqual([
        { action: 'cancel', status: 'cancelled', reasonRequired: false },
        { action: 'request_cancellation', status: 'pending', reasonRequired: true },
      ])
      expect(order.requests).toEqual([])
      expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 364.5, escrow: 135.5 })
      const created = await eventsNamed(ctx, 'order.created')
      expect(created.find((event) => event.data.orderId === order.id)?.data).toEqual({
        orderId: order.id,
        serviceId: service.serviceId,
        buyerId: buyer.user.id,
        sellerId: service.seller.user.id,
        total: 135.5,
      })

      const asSeller = await request(ctx.app, { method: 'GET', url: `/orders/${order.id}`, token: service.seller.accessToken })
      expect(asSeller.json().data.allowedActions.map((move: { action: string }) => move.action).sort()).toEqual(['accept', 'cancel', 'request_cancellation'])
    })

    it('takes ids in any letter case, as PostgreSQL reads a UUID', async () => {
      const service = await createActiveService(ctx)
      const buyer = await createFundedBuyer(ctx, 500)
      const response = await request(ctx.app, {
        method: 'POST',
        url: '/orders',
        token: buyer.accessToken,
        payload: { serviceId: service.serviceId.toUpperCase(), packageId: service.packageIds.basic.toUpperCase(), extras: [service.extraIds.express.toUpperCase()] },
      })
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json().data).toMatchObject({ serviceId: service.serviceId, packageId: service.packageIds.basic, total: 115.5, extras: [{ id: service.extraIds.express }] })
      expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 384.5, escrow: 115.5 })
    })

    it('prices a large order exactly: the fee of a 25,000.00 package', async () => {
      const service = await createActiveService(ctx)
      await ctx.database.db.update(servicePackages).set({ priceCents: 2_500_000 }).where(eq(servicePackages.id, service.packageIds.basic))
      const buyer = await createFundedBuyer(ctx, 10_000)
      for (let deposit = 0; deposit < 2; deposit++) {
        expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: buyer.accessToken, payload: { amount: 10_000 } })).statusCode).toBe(201)
      }
      const response = await request(ctx.app, { method: 'POST', url: '/orders', token: buyer.accessToken, payload: { serviceId: service.serviceId, packageId: service.packageIds.basic, extras: [service.extraIds.express] } })
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json().data).toMatchObject({ total: 25_015.5, platformFee: 2_501.55, sellerEarning: 22_513.95 })
    })

    it('keeps the prices of existing orders when the seller edits the service', async () => {
      const placed = await placeOrder(ctx)
      const categoryId = (await request(ctx.app, { method: 'GET', url: `/services/${placed.serviceId}` })).json().data.category.id
      const edited = await request(ctx.app, {
        method: 'PUT',
        url: `/services/${placed.serviceId}`,
        token: placed.seller.accessToken,
        payload: { title: 'A new title for this', description: 'A completely different description of it.', categoryId, packages: [{ name: 'Basic', price: 999, deliveryDays: 30, revisions: 0 }] },
      })
      expect(edited.statusCode, edited.body).toBe(200)
      const order = (await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.buyer.accessToken })).json().data
      expect(order).toMatchObject({ price: 100, total: 100, deliveryDays: 3, revisionsLeft: 2, packageName: 'Basic', packageId: placed.packageIds.basic })
    })

    it('replays the answer for the same Idempotency-Key and charges once', async () => {
      const service = await createActiveService(ctx)
      const buyer = await createFundedBuyer(ctx, 300)
      const send = () =>
        request(ctx.app, { method: 'POST', url: '/orders', token: buyer.accessToken, headers: { 'idempotency-key': 'order-1' }, payload: { serviceId: service.serviceId, packageId: service.packageIds.basic } })
      const first = await send()
      const second = await send()
      expect(first.statusCode).toBe(201)
      expect(second.statusCode).toBe(201)
      expect(second.headers['idempotent-replayed']).toBe('true')
      expect(second.json().data.id).toBe(first.json().data.id)
      expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 200, escrow: 100 })
      const reused = await request(ctx.app, { method: 'POST', url: '/orders', token: buyer.accessToken, headers: { 'idempotency-key': 'order-1' }, payload: { serviceId: service.serviceId, packageId: service.packageIds.premium } })
      expectError(reused, 422, 'IDEMPOTENCY_KEY_REUSED')
    })

    it('refuses without a token (401)', async () => {
      expectError(await request(ctx.app, { method: 'POST', url: '/orders', payload: {} }), 401, 'UNAUTHENTICATED')
    })

    describe('bad input: a clear 4xx and nothing changed', () => {
      let service: Awaited<ReturnType<typeof createActiveService>>
      let buyer: Awaited<ReturnType<typeof createFundedBuyer>>
      let before: { orders: number; conversations: number; events: number }
      const counts = async () => ({
        orders: (await ctx.database.db.select().from(orders)).length,
        conversations: (await ctx.database.db.select().from(conversations)).length,
        events: (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))).filter((row) => (row.payload as { event: string }).event === 'order.created').length,
      })
      beforeAll(async () => {
        service = await createActiveService(ctx)
        buyer = await createFundedBuyer(ctx, 50)
        before = await counts()
      })
      afterEach(async () => {
        expect(await counts()).toEqual(before)
        expect(await wallet(ctx, buyer.accessToken)).toMatchObject({ balance: 50, escrow: 0 })
      })
      const place = (payload: Record<string, unknown>, token = buyer.accessToken) => request(ctx.app, { method: 'POST', url: '/orders', token, payload })

      it('own service: 422 OWN_SERVICE', async () => {
        const ownerBuyer = service.seller
        expectError(await place({ serviceId: service.serviceId, packageId: service.packageIds.basic }, ownerBuyer.accessToken), 422, 'OWN_SERVICE')
      })
      it('inactive (paused) service: 404', async () => {
        const other = await createActiveService(ctx)
        await request(ctx.app, { method: 'POST', url: `/services/${other.serviceId}/pause`, token: other.seller.accessToken })
        expectError(await place({ serviceId: other.serviceId, packageId: other.packageIds.basic }), 404, 'NOT_FOUND')
      })
      it('unknown service: 404', async () => {
        expectError(await place({ serviceId: '01890000-0000-7000-8000-000000000000', packageId: service.packageIds.basic }), 404, 'NOT_FOUND')
      })
      it('a package of another service: 400 on packageId', async () => {
        const other = await createActiveService(ctx)
        expectError(await place({ serviceId: service.serviceId, packageId: other.packageIds.basic }), 400, 'VALIDATION_ERROR', ['packageId'])
      })
      it('unknown extras: 400 on extras.N', async () => {
        const other = await createActiveService(ctx)
        expectError(await place({ serviceId: service.serviceId, packageId: service.packageIds.basic, extras: [service.extraIds.source, other.extraIds.source] }), 400, 'VALIDATION_ERROR', ['extras.1'])
        expectError(await place({ serviceId: service.serviceId, packageId: service.packageIds.basic, extras: ['nope'] }), 400, 'VALIDATION_ERROR', ['extras.0'])
        expectError(await place({ serviceId: service.serviceId, packageId: service.packageIds.basic, extras: [service.extraIds.source, service.extraIds.source] }), 400, 'VALIDATION_ERROR', ['extras'])
      })
      it('ids in a form PostgreSQL does not read (a urn:uuid: prefix): 400 naming the field, never a 500', async () => {
        expectError(await place({ serviceId: service.serviceId, packageId: `urn:uuid:${service.packageIds.basic}` }), 400, 'VALIDATION_ERROR', ['packageId'])
        expectError(await place({ serviceId: `urn:uuid:${service.serviceId}`, packageId: service.packageIds.basic }), 400, 'VALIDATION_ERROR', ['serviceId'])
        expectError(await place({ serviceId: service.serviceId, packageId: service.packageIds.basic, extras: [`urn:uuid:${service.extraIds.source}`] }), 400, 'VALIDATION_ERROR', ['extras.0'])
      })
      it('requirements over 5,000 characters: 400 on requirements', async () => {
        expectError(await place({ serviceId: service.serviceId, packageId: service.packageIds.basic, requirements: 'x'.repeat(5001) }), 400, 'VALIDATION_ERROR', ['requirements'])
      })
      it('missing and malformed fields: 400 naming each', async () => {
        expectError(await place({}), 400, 'VALIDATION_ERROR', ['packageId', 'serviceId'])
        expectError(await place({ serviceId: 'x', packageId: 3, color: 'red' }), 400, 'VALIDATION_ERROR')
      })
      it('more than the balance: 422 INSUFFICIENT_FUNDS', async () => {
        expectError(await place({ serviceId: service.serviceId, packageId: service.packageIds.basic }), 422, 'INSUFFICIENT_FUNDS')
      })
    })
  })

  describe('reads', () => {
    it('lists purchases and sales, filtered by status and paged; a stranger gets 404 on the order', async () => {
      const service = await createActiveService(ctx)
      const buyer = await createFundedBuyer(ctx, 1000)
      const first = await placeOrder(ctx, { service, buyer })
      const second = await placeOrder(ctx, { service, buyer })
      await moveOrder(ctx, service.seller.accessToken, second.orderId, 'in_progress')

      const purchases = await request(ctx.app, { method: 'GET', url: '/orders/purchases?limit=1', token: buyer.accessToken })
      expect(purchases.statusCode).toBe(200)
      expect(purchases.json().data.pagination).toMatchObject({ page: 1, limit: 1, total: 2, pages: 2, hasNext: true })
      expect(purchases.json().data.items[0].id).toBe(second.orderId)
      const pending = await request(ctx.app, { method: 'GET', url: '/orders/sales?status=pending', token: service.seller.accessToken })
      expect(pending.json().data.items.map((order: { id: string }) => order.id)).toEqual([first.orderId])
      const noSales = await request(ctx.app, { method: 'GET', url: '/orders/sales', token: buyer.accessToken })
      expect(noSales.json().data.items).toEqual([])
      expectError(await request(ctx.app, { method: 'GET', url: '/orders/purchases?status=shipped', token: buyer.accessToken }), 400, 'VALIDATION_ERROR', ['status'])
      expectError(await request(ctx.app, { method: 'GET', url: '/orders/purchases' }), 401, 'UNAUTHENTICATED')

      const stranger = await createUser(ctx)
      expectError(await request(ctx.app, { method: 'GET', url: `/orders/${first.orderId}`, token: stranger.accessToken }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: '/orders/not-an-id', token: stranger.accessToken }), 404, 'NOT_FOUND')
      const viewer = await createUser(ctx, { permissions: ['view_orders'] })
      const seen = await request(ctx.app, { method: 'GET', url: `/orders/${first.orderId}`, token: viewer.accessToken })
      expect(seen.statusCode).toBe(200)
      expect(seen.json().data.allowedActions).toEqual([])
    })

    it('GET /admin/orders: view_orders, filters by status, buyer and seller; 403 without the permission', async () => {
      const placed = await placeOrder(ctx)
      const viewer = await createUser(ctx, { permissions: ['view_orders'] })
      const byBuyer = await request(ctx.app, { method: 'GET', url: `/admin/orders?buyerId=${placed.buyer.user.id}&status=pending`, token: viewer.accessToken })
      expect(byBuyer.statusCode).toBe(200)
      expect(byBuyer.json().data.items.map((order: { id: string }) => order.id)).toEqual([placed.orderId])
      const bySeller = await request(ctx.app, { method: 'GET', url: `/admin/orders?sellerId=${placed.seller.user.id}&status=completed`, token: viewer.accessToken })
      expect(bySeller.json().data.items).toEqual([])
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/orders', token: placed.buyer.accessToken }), 403, 'FORBIDDEN')
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/orders?buyerId=x', token: viewer.accessToken }), 400, 'VALIDATION_ERROR', ['buyerId'])
    })
  })

  describe('POST /admin/orders/{id}/cancel', () => {
    it('refunds the buyer (manage_orders), refuses a completed order (422) and others (403, 404)', async () => {
      const placed = await placeOrder(ctx)
      const manager = await createUser(ctx, { permissions: ['manage_orders'] })
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/orders/${placed.orderId}/cancel`, token: placed.buyer.accessToken, payload: {} }), 403, 'FORBIDDEN')
      const cancelled = await request(ctx.app, { method: 'POST', url: `/admin/orders/${placed.orderId}/cancel`, token: manager.accessToken, payload: { reason: 'Fraud check' } })
      expect(cancelled.statusCode, cancelled.body).toBe(200)
      expect(cancelled.json().data).toMatchObject({ status: 'cancelled', statusReason: 'Fraud check' })
      expect(await wallet(ctx, placed.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/orders/${placed.orderId}/cancel`, token: manager.accessToken, payload: {} }), 422, 'INVALID_TRANSITION')
      expectError(await request(ctx.app, { method: 'POST', url: '/admin/orders/01890000-0000-7000-8000-000000000000/cancel', token: manager.accessToken, payload: {} }), 404, 'NOT_FOUND')
    })
  })

  describe('DELETE /services/{id} while orders are open', () => {
    it('is refused with 422 SERVICE_HAS_OPEN_ORDERS, and allowed once the order is closed', async () => {
      const placed = await placeOrder(ctx)
      const remove = () => request(ctx.app, { method: 'DELETE', url: `/services/${placed.serviceId}`, token: placed.seller.accessToken })
      expectError(await remove(), 422, 'SERVICE_HAS_OPEN_ORDERS')
      await moveOrder(ctx, placed.buyer.accessToken, placed.orderId, 'cancelled')
      expect((await remove()).statusCode).toBe(200)
    })
  })
})
