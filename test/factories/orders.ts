import { expect } from 'vitest'
import { request, type TestContext } from '../setup/test-app.ts'
import { multipart } from './files.ts'
import { createCategory, serviceBody } from './services.ts'
import { createSuperuser, createUser, type TestUser, type UserOptions } from './users.ts'

const staffByContext = new WeakMap<TestContext, Promise<TestUser>>()
/** One superuser per test app, to approve services, with a fresh session each time (tests move the clock). */
const approver = async (ctx: TestContext): Promise<TestUser> => {
  let found = staffByContext.get(ctx)
  if (!found) staffByContext.set(ctx, (found = createSuperuser(ctx)))
  const staff = await found
  return { ...staff, ...(await ctx.app.container.auth.issueSession(staff.user)) }
}

/** New sessions for users whose access tokens expired because the test moved the clock. */
export async function renewSessions(ctx: TestContext, ...users: TestUser[]): Promise<void> {
  for (const user of users) Object.assign(user, await ctx.app.container.auth.issueSession(user.user))
}

/** A user with `amount` (default 500.00) deposited into the wallet through the API. */
export async function createFundedBuyer(ctx: TestContext, amount = 500, options: UserOptions = {}): Promise<TestUser> {
  const buyer = await createUser(ctx, options)
  if (amount > 0) {
    const deposited = await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: buyer.accessToken, payload: { amount } })
    expect(deposited.statusCode, deposited.body).toBe(201)
  }
  return buyer
}

export interface ActiveService {
  seller: TestUser
  serviceId: string
  /** Basic 100.00 (3 days, 2 revisions), Premium 250.00 (5 days, unlimited revisions). */
  packageIds: { basic: string; premium: string }
  /** Source files 20.00 (+1 day), Express 15.50 (+0 days). */
  extraIds: { source: string; express: string }
}

/** A seller's service with two packages and two extras, approved (active). */
export async function createActiveService(ctx: TestContext, seller?: TestUser): Promise<ActiveService> {
  const owner = seller ?? (await createUser(ctx))
  const categoryId = await createCategory(ctx)
  const created = await request(ctx.app, {
    method: 'POST',
    url: '/services',
    token: owner.accessToken,
    payload: serviceBody(categoryId, {
      packages: [
        { name: 'Basic', price: 100, deliveryDays: 3, revisions: 2 },
        { name: 'Premium', price: 250, deliveryDays: 5, revisions: 'unlimited' },
      ],
      extras: [
        { title: 'Source files', price: 20, additionalDays: 1 },
        { title: 'Express', price: 15.5, additionalDays: 0 },
      ],
    }),
  })
  expect(created.statusCode, created.body).toBe(201)
  const service = created.json().data as { id: string; packages: { id: string }[]; extras: { id: string }[] }
  const staff = await approver(ctx)
  const approved = await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/approve`, token: staff.accessToken })
  expect(approved.statusCode, approved.body).toBe(200)
  return {
    seller: owner,
    serviceId: service.id,
    packageIds: { basic: service.packages[0]!.id, premium: service.packages[1]!.id },
    extraIds: { source: service.extras[0]!.id, express: service.extras[1]!.id },
  }
}

export interface PlacedOrder extends ActiveService {
  buyer: TestUser
  orderId: string
  order: Record<string, unknown> & { id: string; status: string; total: number }
}

/** A funded buyer's pending order of the Basic package (100.00) of a new active service, unless told otherwise. */
export async function placeOrder(ctx: TestContext, options: { service?: ActiveService; buyer?: TestUser; extras?: string[]; package?: 'basic' | 'premium'; requirements?: string } = {}): Promise<PlacedOrder> {
  const service = options.service ?? (await createActiveService(ctx))
  const buyer = options.buyer ?? (await createFundedBuyer(ctx))
  const placed = await request(ctx.app, {
    method: 'POST',
    url: '/orders',
    token: buyer.accessToken,
    payload: { serviceId: service.serviceId, packageId: service.packageIds[options.package ?? 'basic'], extras: options.extras ?? [], requirements: options.requirements ?? 'A logo for my bakery' },
  })
  expect(placed.statusCode, placed.body).toBe(201)
  const order = placed.json().data as PlacedOrder['order']
  return { ...service, buyer, orderId: order.id, order }
}

/** Moves an order through `PUT /orders/{id}/status` and expects success. */
export async function moveOrder(ctx: TestContext, token: string, orderId: string, status: string, reason?: string) {
  const response = await request(ctx.app, { method: 'PUT', url: `/orders/${orderId}/status`, token, payload: { status, ...(reason && { reason }) } })
  expect(response.statusCode, response.body).toBe(200)
  return response.json().data as Record<string, unknown> & { status: string }
}

/** Delivers an order through `POST /orders/{id}/deliver` with a message (null: none) and files (one small text file by default). */
export function deliver(ctx: TestContext, token: string, orderId: string, files: { filename: string; content: Buffer }[] = [{ filename: 'logo.txt', content: Buffer.from('the final logo\n') }], message: string | null = 'Here is your logo') {
  const form = multipart([...(message === null ? [] : [{ name: 'message', value: message }]), ...files.map((file) => ({ name: 'files', filename: file.filename, content: file.content }))])
  return request(ctx.app, { method: 'POST', url: `/orders/${orderId}/deliver`, token, payload: form.payload, headers: form.headers })
}

/** An order brought to `status` through the API, as its parties would. */
export async function orderIn(ctx: TestContext, status: 'pending' | 'in_progress' | 'delivered' | 'completed' | 'cancelled' | 'disputed', options: { service?: ActiveService; buyer?: TestUser } = {}): Promise<PlacedOrder> {
  const placed = await placeOrder(ctx, options)
  const { buyer, seller, orderId } = placed
  if (status === 'cancelled') await moveOrder(ctx, buyer.accessToken, orderId, 'cancelled')
  if (status === 'pending' || status === 'cancelled') return placed
  await moveOrder(ctx, seller.accessToken, orderId, 'in_progress')
  if (status === 'disputed') await moveOrder(ctx, buyer.accessToken, orderId, 'disputed', 'The seller stopped answering')
  if (status === 'in_progress' || status === 'disputed') return placed
  const delivered = await deliver(ctx, seller.accessToken, orderId)
  expect(delivered.statusCode, delivered.body).toBe(200)
  if (status === 'completed') await moveOrder(ctx, buyer.accessToken, orderId, 'completed')
  return placed
}
