import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createActiveService, createFundedBuyer, orderIn, type ActiveService, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type ErrorJson, type TestContext } from '../../../test/setup/test-app.ts'
import { orderStatuses, transitions, type OrderStatus } from './order-status.ts'

type Role = 'buyer' | 'seller' | 'stranger' | 'staff'
const roles: Role[] = ['buyer', 'seller', 'stranger', 'staff']

/** The moves of the table a role may make from a status (staff here hold every order permission). */
const movesOf = (from: OrderStatus, role: Role) => transitions.filter((move) => move.from === from && move.by === role)
const allowedThroughStatusRoute = (from: OrderStatus, role: Role, to: OrderStatus) => movesOf(from, role).some((move) => move.to === to && !move.viaDeliver)

/**
 * Every (from, to) pair for buyer, seller, stranger and staff, from the same data the service
 * decides with: allowed pairs succeed (each on a fresh order), every other pair answers 422
 * INVALID_TRANSITION listing exactly the caller's moves (404 for a stranger), and changes nothing.
 */
describe('PUT /orders/{id}/status: the transition table, move by move', () => {
  let ctx: TestContext
  let service: ActiveService
  let buyer: TestUser
  let stranger: TestUser
  let staff: TestUser
  const shared = new Map<OrderStatus, PlacedOrder>()
  const tokenOf = (role: Role, order: PlacedOrder) => ({ buyer: order.buyer, seller: order.seller, stranger, staff })[role].accessToken

  beforeAll(async () => {
    ctx = await createTestApp()
    service = await createActiveService(ctx)
    buyer = await createFundedBuyer(ctx, 10_000)
    stranger = await createUser(ctx)
    staff = await createUser(ctx, { permissions: ['view_orders', 'manage_orders', 'resolve_disputes'] })
    for (const status of orderStatuses) shared.set(status, await orderIn(ctx, status, { service, buyer }))
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const send = (token: string, orderId: string, status: string, reason?: string) =>
    request(ctx.app, { method: 'PUT', url: `/orders/${orderId}/status`, token, payload: { status, ...(reason !== undefined && { reason }) } })

  for (const from of orderStatuses) {
    for (const role of roles) {
      for (const to of orderStatuses) {
        const allowed = role !== 'stranger' && allowedThroughStatusRoute(from, role, to)
        it(`${from} -> ${to} by the ${role}: ${role === 'stranger' ? '404' : allowed ? 'allowed' : '422'}`, async () => {
          const order = allowed ? await orderIn(ctx, from, { service, buyer }) : shared.get(from)!
          const response = await send(tokenOf(role, order), order.orderId, to, 'Because')
          if (role === 'stranger') return expectError(response, 404, 'NOT_FOUND')
          if (allowed) {
            expect(response.statusCode, response.body).toBe(200)
            expect(response.json().data.status).toBe(to)
            return
          }
          expectError(response, 422, 'INVALID_TRANSITION')
          const expected = movesOf(from, role).map((move) => (move.viaDeliver ? `${move.to} (POST /orders/{orderId}/deliver)` : move.to))
          expect(response.json<ErrorJson>().error.details.map((detail) => detail.message).sort()).toEqual(expected.sort())
          const after = await request(ctx.app, { method: 'GET', url: `/orders/${order.orderId}`, token: order.buyer.accessToken })
          expect(after.json().data.status).toBe(from)
        })
      }
    }
  }

  it('lists in allowedActions exactly the moves of the table for each party and staff', async () => {
    for (const from of orderStatuses) {
      const order = shared.get(from)!
      for (const role of ['buyer', 'seller', 'staff'] as const) {
        const answer = await request(ctx.app, { method: 'GET', url: `/orders/${order.orderId}`, token: tokenOf(role, order) })
        const actions = answer.json().data.allowedActions as { action: string; status: string }[]
        expect(actions.map((move) => `${move.action}:${move.status}`).sort(), `${from} as ${role}`).toEqual(movesOf(from, role).map((move) => `${move.action}:${move.to}`).sort())
      }
    }
  })

  it('a dispute without a reason is 400 on reason; a status outside the six is 400 on status', async () => {
    const order = shared.get('in_progress')!
    expectError(await send(order.buyer.accessToken, order.orderId, 'disputed'), 400, 'VALIDATION_ERROR', ['reason'])
    expectError(await send(order.buyer.accessToken, order.orderId, 'shipped'), 400, 'VALIDATION_ERROR', ['status'])
    expectError(await send(order.buyer.accessToken, order.orderId, 'disputed', '   '), 400, 'VALIDATION_ERROR', ['reason'])
  })

  it('staff without the move’s permission get 403; without any order permission 404; no token 401', async () => {
    const viewer = await createUser(ctx, { permissions: ['view_orders'] })
    const manager = await createUser(ctx, { permissions: ['manage_orders'] })
    const other = await createUser(ctx, { permissions: ['view_users'] })
    expectError(await send(viewer.accessToken, shared.get('pending')!.orderId, 'cancelled'), 403, 'FORBIDDEN')
    expectError(await send(manager.accessToken, shared.get('disputed')!.orderId, 'completed'), 403, 'FORBIDDEN')
    expectError(await send(other.accessToken, shared.get('pending')!.orderId, 'cancelled'), 404, 'NOT_FOUND')
    expectError(await request(ctx.app, { method: 'PUT', url: `/orders/${shared.get('pending')!.orderId}/status`, payload: { status: 'cancelled' } }), 401, 'UNAUTHENTICATED')
  })
})
