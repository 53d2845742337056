import { count, eq } from 'drizzle-orm'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { auditLog } from '../../src/modules/audit/audit.table.ts'
import { users } from '../../src/modules/users/users.table.ts'
import { submitKyc } from '../factories/kyc.ts'
import { orderIn, placeOrder } from '../factories/orders.ts'
import { createCategory, publishService } from '../factories/services.ts'
import { createStaffTeam, createUser, unique, type StaffTeam, type TestUser } from '../factories/users.ts'
import { expectBooksBalance } from '../setup/ledger.ts'
import { API, createTestApp, request, type TestContext } from '../setup/test-app.ts'

/**
 * Every staff write is on record. The routes come from the app's own OpenAPI document: every
 * operation that is not a read and either lives under `/admin` or documents a 403 (the answer to a
 * caller without the staff permission it needs, as on `PUT /orders/{orderId}/status`). Each has a
 * scenario below that calls it as staff and expects exactly one audit row naming the actor, the
 * target and the request; a new staff route without one fails the first test.
 */
describe('staff writes and the audit log', () => {
  let ctx: TestContext
  let team: StaffTeam
  beforeAll(async () => {
    // Earnings clear for a while, so that a completed order can be refunded by staff.
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '7' } })
    team = await createStaffTeam(ctx)
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  interface Call {
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE'
    url: string
    actor: TestUser
    payload?: object
    targetType: string
    /** The object acted on; read from the answer when the call creates it. */
    targetId: string | ((response: LightMyRequestResponse) => string)
  }

  interface Scenario {
    /** `METHOD /path/{param}` as the OpenAPI document writes it, without the API prefix. */
    route: string
    label: string
    /** Sets up what the call acts on (its own audit rows are not counted) and answers the call. */
    prepare: () => Promise<Call>
  }

  const created = (response: LightMyRequestResponse) => response.json().data.id as string
  const post = (url: string, token: string, payload?: object) => request(ctx.app, { method: 'POST', url, token, payload })
  const expectOk = (response: LightMyRequestResponse) => {
    expect(response.statusCode, response.body).toBeLessThan(300)
    return response
  }

  const newRole = async () => created(expectOk(await post('/admin/roles', team.admin.accessToken, { name: unique('role'), permissions: ['view_users'] })))
  const newCategory = async () => created(expectOk(await post('/categories', team.admin.accessToken, { name: unique('Category') })))
  const newEndpoint = async () => created(expectOk(await post('/admin/webhooks', team.admin.accessToken, { url: 'http://127.0.0.1:9/in' })))
  const newPendingService = async () => publishService(ctx, (await createUser(ctx)).accessToken, await createCategory(ctx))
  const staffBody = () => {
    const name = unique('st')
    return { fullName: 'Support Person', username: name.slice(0, 20), email: `${name}@example.test`, password: 'Staff1234' }
  }
  const newStaff = async () => created(expectOk(await post('/admin/staff', team.admin.accessToken, staffBody())))
  const newPayout = async () => {
    const seller = await createUser(ctx)
    await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, seller.user.id))
    expectOk(await post('/wallet/deposits', seller.accessToken, { amount: 50 }))
    return created(expectOk(await post('/wallet/payout', seller.accessToken, { amount: 20, method: 'paypal', details: { email: 'me@example.test' } })))
  }
  const newSubmission = async () => submitKyc(ctx.app, (await createUser(ctx)).accessToken)
  const userIn = async (state: 'active' | 'inactive' | 'suspended') => {
    const user = await createUser(ctx)
    if (state === 'inactive') expectOk(await post(`/admin/users/${user.user.id}/deactivate`, team.manager.accessToken))
    if (state === 'suspended') expectOk(await post(`/admin/users/${user.user.id}/suspend`, team.manager.accessToken, { reason: 'Spam' }))
    return user.user.id
  }

  const scenarios: Scenario[] = [
    { route: 'POST /admin/roles', label: 'role creation', prepare: async () => ({ method: 'POST', url: '/admin/roles', actor: team.admin, payload: { name: unique('role'), permissions: ['view_kyc'] }, targetType: 'role', targetId: created }) },
    { route: 'PUT /admin/roles/{roleId}', label: 'role change', prepare: async () => withTarget('PUT', '/admin/roles/{}', await newRole(), team.admin, 'role', { permissions: ['view_users', 'view_kyc'] }) },
    { route: 'DELETE /admin/roles/{roleId}', label: 'role deletion', prepare: async () => withTarget('DELETE', '/admin/roles/{}', await newRole(), team.admin, 'role') },
    { route: 'POST /admin/services/{serviceId}/approve', label: 'service approval', prepare: async () => withTarget('POST', '/admin/services/{}/approve', await newPendingService(), team.moderator, 'service') },
    { route: 'POST /admin/services/{serviceId}/reject', label: 'service rejection', prepare: async () => withTarget('POST', '/admin/services/{}/reject', await newPendingService(), team.moderator, 'service', { reason: 'Blurry images' }) },
    { route: 'POST /categories', label: 'category creation', prepare: async () => ({ method: 'POST', url: '/categories', actor: team.admin, payload: { name: unique('Category') }, targetType: 'category', targetId: created }) },
    { route: 'PUT /categories/{categoryId}', label: 'category change', prepare: async () => withTarget('PUT', '/categories/{}', await newCategory(), team.admin, 'category', { name: 'Renamed' }) },
    { route: 'DELETE /categories/{categoryId}', label: 'category deletion', prepare: async () => withTarget('DELETE', '/categories/{}', await newCategory(), team.admin, 'category') },
    { route: 'POST /admin/payouts/{payoutId}/approve', label: 'payout approval', prepare: async () => withTarget('POST', '/admin/payouts/{}/approve', await newPayout(), team.cashier, 'payout') },
    { route: 'POST /admin/payouts/{payoutId}/reject', label: 'payout rejection', prepare: async () => withTarget('POST', '/admin/payouts/{}/reject', await newPayout(), team.cashier, 'payout', { reason: 'Account closed' }) },
    { route: 'POST /admin/wallets/{userId}/adjustments', label: 'wallet adjustment', prepare: async () => withTarget('POST', '/admin/wallets/{}/adjustments', (await createUser(ctx)).user.id, team.admin, 'user', { amount: 12.5, reason: 'Goodwill credit' }) },
    { route: 'POST /admin/kyc/{submissionId}/approve', label: 'KYC approval', prepare: async () => withTarget('POST', '/admin/kyc/{}/approve', await newSubmission(), team.reviewer, 'kyc_submission') },
    { route: 'POST /admin/kyc/{submissionId}/reject', label: 'KYC rejection', prepare: async () => withTarget('POST', '/admin/kyc/{}/reject', await newSubmission(), team.reviewer, 'kyc_submission', { reason: 'The photo is unreadable' }) },
    { route: 'PUT /orders/{orderId}/status', label: 'staff cancel through the status route', prepare: async () => withTarget('PUT', '/orders/{}/status', (await placeOrder(ctx)).orderId, team.orderManager, 'order', { status: 'cancelled', reason: 'Duplicate order' }) },
    { route: 'PUT /orders/{orderId}/status', label: 'dispute resolution through the status route', prepare: async () => withTarget('PUT', '/orders/{}/status', (await orderIn(ctx, 'disputed')).orderId, team.arbiter, 'order', { status: 'completed', reason: 'The delivery matches the brief' }) },
    { route: 'POST /admin/orders/{orderId}/resolve', label: 'split dispute resolution', prepare: async () => withTarget('POST', '/admin/orders/{}/resolve', (await orderIn(ctx, 'disputed')).orderId, team.arbiter, 'order', { refundAmount: 25, note: 'Half the work was delivered' }) },
    { route: 'POST /admin/orders/{orderId}/refund', label: 'staff refund', prepare: async () => withTarget('POST', '/admin/orders/{}/refund', (await orderIn(ctx, 'completed')).orderId, team.orderManager, 'order', { amount: 10, note: 'Part of the work was missing' }) },
    { route: 'POST /admin/orders/{orderId}/cancel', label: 'staff cancel', prepare: async () => withTarget('POST', '/admin/orders/{}/cancel', (await placeOrder(ctx)).orderId, team.orderManager, 'order', { reason: 'Fraudulent listing' }) },
    { route: 'POST /admin/staff', label: 'staff creation', prepare: async () => ({ method: 'POST', url: '/admin/staff', actor: team.admin, payload: staffBody(), targetType: 'user', targetId: created }) },
    { route: 'PUT /admin/staff/{userId}/roles', label: 'staff roles', prepare: async () => withTarget('PUT', '/admin/staff/{}/roles', await newStaff(), team.admin, 'user', { roleIds: [await newRole()] }) },
    { route: 'POST /admin/users/{userId}/deactivate', label: 'deactivation', prepare: async () => withTarget('POST', '/admin/users/{}/deactivate', await userIn('active'), team.manager, 'user') },
    { route: 'POST /admin/users/{userId}/reactivate', label: 'reactivation', prepare: async () => withTarget('POST', '/admin/users/{}/reactivate', await userIn('inactive'), team.manager, 'user') },
    { route: 'POST /admin/users/{userId}/suspend', label: 'suspension', prepare: async () => withTarget('POST', '/admin/users/{}/suspend', await userIn('active'), team.manager, 'user', { reason: 'Spam' }) },
    { route: 'POST /admin/users/{userId}/unsuspend', label: 'lifting a suspension', prepare: async () => withTarget('POST', '/admin/users/{}/unsuspend', await userIn('suspended'), team.manager, 'user') },
    { route: 'POST /admin/webhooks', label: 'endpoint registration', prepare: async () => ({ method: 'POST', url: '/admin/webhooks', actor: team.admin, payload: { url: 'http://127.0.0.1:9/in' }, targetType: 'webhook_endpoint', targetId: created }) },
    { route: 'PATCH /admin/webhooks/{webhookId}', label: 'endpoint change', prepare: async () => withTarget('PATCH', '/admin/webhooks/{}', await newEndpoint(), team.admin, 'webhook_endpoint', { enabled: false }) },
    { route: 'DELETE /admin/webhooks/{webhookId}', label: 'endpoint deletion', prepare: async () => withTarget('DELETE', '/admin/webhooks/{}', await newEndpoint(), team.admin, 'webhook_endpoint') },
    { route: 'POST /admin/webhooks/{webhookId}/rotate-secret', label: 'secret rotation', prepare: async () => withTarget('POST', '/admin/webhooks/{}/rotate-secret', await newEndpoint(), team.admin, 'webhook_endpoint') },
    { route: 'POST /admin/webhooks/{webhookId}/test', label: 'test message', prepare: async () => withTarget('POST', '/admin/webhooks/{}/test', await newEndpoint(), team.admin, 'webhook_endpoint') },
    {
      route: 'POST /admin/webhook-deliveries/{deliveryId}/retry',
      label: 'delivery retry',
      prepare: async () => {
        const test = expectOk(await post(`/admin/webhooks/${await newEndpoint()}/test`, team.admin.accessToken))
        return withTarget('POST', '/admin/webhook-deliveries/{}/retry', created(test), team.admin, 'webhook_delivery')
      },
    },
  ]

  /**
   * Staff routes that write no audit row, each with the reason. None today: a delivery retry and a
   * test message send data to a system outside, so they are on record too.
   */
  const EXEMPT: Record<string, string> = {}

  function withTarget(method: Call['method'], path: string, targetId: string, actor: TestUser, targetType: string, payload?: object): Call {
    return { method, url: path.replace('{}', targetId), actor, targetType, targetId, ...(payload && { payload }) }
  }

  /** The staff write routes of the app, from its OpenAPI document. */
  function staffWriteRoutes(): string[] {
    const document = ctx.app.swagger() as { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> }
    const routes: string[] = []
    for (const [path, operations] of Object.entries(document.paths)) {
      const route = path.startsWith(API) ? path.slice(API.length) : path
      for (const [method, operation] of Object.entries(operations)) {
        if (!['post', 'put', 'patch', 'delete'].includes(method)) continue
        if (route.startsWith('/admin/') || Object.keys(operation.responses ?? {}).includes('403')) routes.push(`${method.toUpperCase()} ${route}`)
      }
    }
    return routes.sort()
  }

  it('has a scenario, or a stated exemption, for every staff write route of the app', () => {
    const covered = [...new Set([...scenarios.map((scenario) => scenario.route), ...Object.keys(EXEMPT)])].sort()
    expect(staffWriteRoutes()).toEqual(covered)
  })

  const auditRows = async () => (await ctx.database.db.select({ total: count() }).from(auditLog))[0]!.total

  it.each(scenarios.map((scenario) => [scenario.route, scenario.label, scenario] as const))('%s (%s) writes exactly one audit row: the actor, the target and the request id', async (_route, _label, scenario) => {
    const call = await scenario.prepare()
    const before = await auditRows()
    const response = expectOk(await request(ctx.app, { method: call.method, url: call.url, token: call.actor.accessToken, ...(call.payload && { payload: call.payload }) }))
    const requestId = response.headers['x-request-id'] as string
    expect(requestId).toEqual(expect.any(String))
    const targetId = typeof call.targetId === 'function' ? call.targetId(response) : call.targetId
    expect(await ctx.database.db.select().from(auditLog).where(eq(auditLog.requestId, requestId))).toEqual([
      expect.objectContaining({ actorId: call.actor.user.id, targetType: call.targetType, targetId, requestId }),
    ])
    expect(await auditRows()).toBe(before + 1)
  })
})
