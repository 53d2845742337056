import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createActiveService, createFundedBuyer, orderIn, type ActiveService, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type ErrorJson, type TestContext } from '../../../test/setup/test-app.ts'
import type { OrderStatus } from './order-status.ts'

type Role = 'buyer' | 'seller' | 'stranger' | 'staff'
const roles: Role[] = ['buyer', 'seller', 'stranger', 'staff']
const statuses: OrderStatus[] = ['pending', 'in_progress', 'delivered', 'completed', 'cancelled', 'disputed']

interface Move {
  from: OrderStatus
  to: OrderStatus
  by: 'buyer' | 'seller' | 'staff'
  action: string
  /** Made through `POST /orders/{id}/deliver`, never through the status route. */
  viaDeliver?: true
  /** Made through `POST /admin/orders/{id}/resolve` (a split of the escrow), never through the status route. */
  viaResolve?: true
}

/**
 * The order rules written out by hand, apart from the table the service decides with, so that a
 * wrong row there fails here: every move a caller may make (staff holding every order
 * permission; the order with revisions left). Any pair not listed is refused.
 */
const expectedMoves: Move[] = [
  { from: 'pending', to: 'in_progress', by: 'seller', action: 'accept' },
  { from: 'pending', to: 'cancelled', by: 'buyer', action: 'cancel' },
  { from: 'pending', to: 'cancelled', by: 'seller', action: 'cancel' },
  { from: 'pending', to: 'cancelled', by: 'staff', action: 'cancel' },
  { from: 'in_progress', to: 'delivered', by: 'seller', action: 'deliver', viaDeliver: true },
  { from: 'in_progress', to: 'disputed', by: 'buyer', action: 'dispute' },
  { from: 'in_progress', to: 'disputed', by: 'seller', action: 'dispute' },
  { from: 'in_progress', to: 'cancelled', by: 'staff', action: 'cancel' },
  { from: 'delivered', to: 'in_progress', by: 'buyer', action: 'request_revision' },
  { from: 'delivered', to: 'completed', by: 'buyer', action: 'complete' },
  { from: 'delivered', to: 'disputed', by: 'buyer', action: 'dispute' },
  { from: 'delivered', to: 'disputed', by: 'seller', action: 'dispute' },
  { from: 'disputed', to: 'completed', by: 'staff', action: 'resolve_completed' },
  { from: 'disputed', to: 'cancelled', by: 'staff', action: 'resolve_cancelled' },
  { from: 'disputed', to: 'completed', by: 'staff', action: 'resolve_split', viaResolve: true },
  { from: 'disputed', to: 'cancelled', by: 'staff', action: 'resolve_split', viaResolve: true },
]

/** The requests each party may open, by hand too: a cancellation by either while the order is under way, more time and a partial refund by the seller. */
const expectedRequests: { from: OrderStatus; by: 'buyer' | 'seller'; action: string }[] = [
  { from: 'pending', by: 'buyer', action: 'request_cancellation' },
  { from: 'pending', by: 'seller', action: 'request_cancellation' },
  { from: 'in_progress', by: 'buyer', action: 'request_cancellation' },
  { from: 'in_progress', by: 'seller', action: 'request_cancellation' },
  { from: 'in_progress', by: 'seller', action: 'request_extension' },
  { from: 'in_progress', by: 'seller', action: 'offer_partial_refund' },
  { from: 'delivered', by: 'buyer', action: 'request_cancellation' },
  { from: 'delivered', by: 'seller', action: 'request_cancellation' },
  { from: 'delivered', by: 'seller', action: 'offer_partial_refund' },
]

const movesOf = (from: OrderStatus, role: Role) => expectedMoves.filter((move) => move.from === from && move.by === role)
const allowedThroughStatusRoute = (from: OrderStatus, role: Role, to: OrderStatus) => movesOf(from, role).some((move) => move.to === to && !move.viaDeliver && !move.viaResolve)

/**
 * Every (from, to) pair for buyer, seller, stranger and staff: allowed pairs succeed (each on a
 * fresh order), every other pair answers 422 INVALID_TRANSITION listing exactly the caller's moves
 * (404 for a stranger), and changes nothing.
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
    for (const status of statuses) shared.set(status, await orderIn(ctx, status, { service, buyer }))
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const send = (token: string, orderId: string, status: string, reason?: string) =>
    request(ctx.app, { method: 'PUT', url: `/orders/${orderId}/status`, token, payload: { status, ...(reason !== undefined && { reason }) } })

  for (const from of statuses) {
    for (const role of roles) {
      for (const to of statuses) {
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
          const expected = movesOf(from, role).map((move) =>
            move.viaDeliver ? `${move.to} (POST /orders/{orderId}/deliver)` : move.viaResolve ? `${move.to} (POST /admin/orders/{orderId}/resolve)` : move.to,
          )
          expect(response.json<ErrorJson>().error.details.map((detail) => detail.message).sort()).toEqual(expected.sort())
          const after = await request(ctx.app, { method: 'GET', url: `/orders/${order.orderId}`, token: order.buyer.accessToken })
          expect(after.json().data.status).toBe(from)
        })
      }
    }
  }

  it('lists in allowedActions exactly the moves of the table for each party and staff', async () => {
    for (const from of statuses) {
      const order = shared.get(from)!
      for (const role of ['buyer', 'seller', 'staff'] as const) {
        const answer = await request(ctx.app, { method: 'GET', url: `/orders/${order.orderId}`, token: tokenOf(role, order) })
        const actions = answer.json().data.allowedActions as { action: string; status: string }[]
        // Besides the table's moves, the buyer of a completed order may tip it (within TIP_DAYS, once), and the parties may open requests.
        const tip = from === 'completed' && role === 'buyer' ? ['tip:completed'] : []
        const requests = expectedRequests.filter((request) => request.from === from && request.by === role).map((request) => `${request.action}:${from}`)
        expect(actions.map((move) => `${move.action}:${move.status}`).sort(), `${from} as ${role}`).toEqual([...movesOf(from, role).map((move) => `${move.action}:${move.to}`), ...tip, ...requests].sort())
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
