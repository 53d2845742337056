import { and, eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createActiveService, createFundedBuyer, type ActiveService } from '../../../test/factories/orders.ts'
import { sendMessage } from '../../../test/factories/messages.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { conversationParticipants } from '../messaging/messaging.table.ts'
import { orders } from '../orders/orders.table.ts'
import { users } from '../users/users.table.ts'
import { tokenFamilies } from './auth.table.ts'

/**
 * `POST /orders` and `GET /messages/conversations/{id}` read the caller's session in their own
 * statement instead of in the authentication hook (decision 0087). Each way a session ends must
 * refuse them as it refuses every other route: 401, and nothing written or marked read.
 */
describe('routes that check the session in their own statement', () => {
  let ctx: TestContext
  let service: ActiveService
  beforeAll(async () => {
    ctx = await createTestApp()
    service = await createActiveService(ctx)
  })
  afterAll(() => ctx.close())

  const db = () => ctx.database.db
  const endings: Record<string, (user: TestUser) => Promise<unknown>> = {
    'logged out': (user) => request(ctx.app, { method: 'POST', url: '/auth/logout', token: user.accessToken, payload: { refreshToken: user.refreshToken } }),
    'session revoked by family, token itself not': (user) => db().update(tokenFamilies).set({ revokedAt: ctx.clock.now() }).where(eq(tokenFamilies.userId, user.user.id)),
    'session expired': (user) => db().update(tokenFamilies).set({ expiresAt: new Date(ctx.clock.now().getTime() - 1000) }).where(eq(tokenFamilies.userId, user.user.id)),
    'account suspended': (user) => db().update(users).set({ suspendedAt: ctx.clock.now() }).where(eq(users.id, user.user.id)),
    'account deactivated': (user) => db().update(users).set({ isActive: false }).where(eq(users.id, user.user.id)),
    'password changed since (token version)': (user) => db().update(users).set({ tokenVersion: sql`${users.tokenVersion} + 1` }).where(eq(users.id, user.user.id)),
  }

  const placeAs = (buyer: TestUser, headers: Record<string, string> = {}) =>
    request(ctx.app, { method: 'POST', url: '/orders', token: buyer.accessToken, headers, payload: { serviceId: service.serviceId, packageId: service.packageIds.basic } })
  const ordersOf = async (buyer: TestUser) => (await db().select().from(orders).where(eq(orders.buyerId, buyer.user.id))).length
  const unreadOf = async (conversationId: string, user: TestUser) => {
    const [row] = await db()
      .select({ unreadCount: conversationParticipants.unreadCount })
      .from(conversationParticipants)
      .where(and(eq(conversationParticipants.conversationId, conversationId), eq(conversationParticipants.userId, user.user.id)))
    return row?.unreadCount
  }
  const balanceOf = async (buyer: TestUser) => (await ctx.app.container.wallet.ledger.balancesOf(db(), buyer.user.id)).available

  it('a live session places an order and reads a conversation', async () => {
    const buyer = await createFundedBuyer(ctx, 300)
    expect((await placeAs(buyer)).statusCode).toBe(201)
    expect(await ordersOf(buyer)).toBe(1)
    expect(await balanceOf(buyer)).toBe(20_000)
    await expectBooksBalance(ctx)
  })

  for (const [ending, end] of Object.entries(endings)) {
    it(`POST /orders, ${ending}: 401 and nothing written`, async () => {
      const buyer = await createFundedBuyer(ctx, 300)
      await end(buyer)
      expectError(await placeAs(buyer), 401, 'UNAUTHENTICATED')
      // With an Idempotency-Key the hook checks the session before the stored answers are looked up.
      expectError(await placeAs(buyer, { 'idempotency-key': `ended-${ending}` }), 401, 'UNAUTHENTICATED')
      // Also when the body is refused: the session is decided first.
      expectError(await request(ctx.app, { method: 'POST', url: '/orders', token: buyer.accessToken, payload: { serviceId: service.serviceId, packageId: service.serviceId } }), 401, 'UNAUTHENTICATED')
      expect(await ordersOf(buyer)).toBe(0)
      expect(await balanceOf(buyer)).toBe(30_000)
    })

    it(`GET /messages/conversations/{id}, ${ending}: 401 and the conversation stays unread`, async () => {
      const [writer, reader] = [await createUser(ctx), await createUser(ctx)]
      const { conversationId } = await sendMessage(ctx, writer, { recipientId: reader.user.id })
      await end(reader)
      expectError(await request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}`, token: reader.accessToken }), 401, 'UNAUTHENTICATED')
      // A conversation that does not exist answers the same 401, not 404.
      expectError(await request(ctx.app, { method: 'GET', url: `/messages/conversations/${service.serviceId}`, token: reader.accessToken }), 401, 'UNAUTHENTICATED')
      expect(await unreadOf(conversationId, reader)).toBe(1)
    })
  }

  it('a live reader gets the page and the conversation is marked read', async () => {
    const [writer, reader] = [await createUser(ctx), await createUser(ctx)]
    const { conversationId } = await sendMessage(ctx, writer, { recipientId: reader.user.id })
    const response = await request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}`, token: reader.accessToken })
    expect(response.statusCode).toBe(200)
    expect(response.json().data.items).toHaveLength(1)
    expect(await unreadOf(conversationId, reader)).toBe(0)
    // A stranger with a live session: 404, as on every conversation route.
    const stranger = await createUser(ctx)
    expectError(await request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}`, token: stranger.accessToken }), 404, 'NOT_FOUND')
  })

  it('staff calling these routes get their permissions, as through the hook', async () => {
    const staff = await createFundedBuyer(ctx, 300, { permissions: ['manage_orders'] })
    const placed = await placeAs(staff)
    expect(placed.statusCode).toBe(201)
    // GET /orders/{id} authenticates in the hook: the same caller must be offered the same moves.
    const read = await request(ctx.app, { method: 'GET', url: `/orders/${placed.json().data.id}`, token: staff.accessToken })
    expect(placed.json().data.allowedActions).toEqual(read.json().data.allowedActions)
    expect(placed.json().data.allowedActions.length).toBeGreaterThan(1)
  })
})
