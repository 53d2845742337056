import { expect } from 'vitest'
import { createSuperuser, createUser, type TestUser } from '../factories/users.ts'
import { fileForm, png } from '../factories/files.ts'
import { orderIn } from '../factories/orders.ts'
import { openRequest } from '../factories/requests.ts'
import { API, request, type TestContext } from '../setup/test-app.ts'
import { listOperations, type KnownValues, type OpenApiDocument, type Operation, type Schema } from './openapi.ts'

/** The operations of the document the app serves, deletions last, so the rows they remove stay there for the others. */
export async function servedOperations(ctx: TestContext): Promise<Operation[]> {
  const response = await ctx.app.inject({ method: 'GET', url: `${API}/openapi.json` })
  expect(response.statusCode).toBe(200)
  const all = listOperations(response.json<OpenApiDocument>())
  return [...all.filter((operation) => operation.method !== 'DELETE'), ...all.filter((operation) => operation.method === 'DELETE')]
}

/** Real rows for path parameters and id fields, so some cases reach the code past "not found". */
export interface Fixtures {
  superuser: TestUser
  /** Another account: a target for the admin routes that is not the caller. */
  other: TestUser
  png: Buffer
  categoryIds: string[]
  categorySlugs: string[]
  roleIds: string[]
  serviceIds: string[]
  uploadIds: string[]
  /** Download paths (what follows /api/v1/uploads/) of real files. */
  uploadPaths: string[]
  /** Ids of the superuser's skills, projects, experiences and education entries. */
  portfolioIds: string[]
  /** A webhook endpoint (nothing listens at its URL) and its test delivery. */
  webhookIds: string[]
  deliveryIds: string[]
  /** Orders in several states (staff see them all), a review of the completed one, and a request open on the delivered one. */
  orderIds: string[]
  reviewIds: string[]
  requestIds: string[]
}

async function post(ctx: TestContext, token: string, url: string, payload: object): Promise<{ id: string; [key: string]: unknown }> {
  const response = await request(ctx.app, { method: 'POST', url, token, payload })
  expect(response.statusCode, `${url}: ${response.body}`).toBeLessThan(300)
  return response.json().data
}

export async function createFixtures(ctx: TestContext): Promise<Fixtures> {
  const superuser = await createSuperuser(ctx)
  const other = await createUser(ctx)
  const token = superuser.accessToken
  const image = await png({ width: 16, height: 16 })

  const category = await post(ctx, token, '/categories', { name: 'Fuzz Category', slug: 'fuzz-category' })
  const subcategory = await post(ctx, token, '/categories', { name: 'Fuzz Sub', slug: 'fuzz-sub', parentId: category.id })
  const role = await post(ctx, token, '/admin/roles', { name: 'Fuzz role', permissions: ['view_users', 'view_services'] })
  const service = (title: string) => ({
    title,
    shortDescription: 'Short',
    description: 'A service created by the fuzz test, long enough to be valid.',
    categoryId: subcategory.id,
    tags: ['fuzz', 'test'],
    packages: [{ name: 'Basic', price: 25.5, deliveryDays: 3, revisions: 2, features: ['one'] }],
    extras: [{ title: 'Fast', price: 10, additionalDays: 1 }],
  })
  const services = [await post(ctx, token, '/services', service('Fuzzed service one')), await post(ctx, token, '/services', service('Fuzzed service two'))]

  const form = fileForm(image, { filename: 'fuzz.png', contentType: 'image/png', tag: 'service_gallery' })
  const uploaded = await request(ctx.app, { method: 'POST', url: '/uploads', token, payload: form.payload, headers: form.headers })
  expect(uploaded.statusCode, uploaded.body).toBe(201)
  const upload = uploaded.json().data as { id: string; url: string }
  const gallery = fileForm(image, { filename: 'gallery.png', contentType: 'image/png', field: 'files' })
  const withImage = await request(ctx.app, { method: 'POST', url: `/services/${services[0]!.id}/images`, token, payload: gallery.payload, headers: gallery.headers })
  expect(withImage.statusCode, withImage.body).toBe(200)
  const images = (withImage.json().data as { images: { id: string; url: string }[] }).images

  const portfolio = [
    await post(ctx, token, '/users/me/skills', { name: 'TypeScript', level: 'expert', yearsOfExperience: 5 }),
    await post(ctx, token, '/users/me/projects', { title: 'Fuzzer', startDate: '2024-01-01', technologies: ['fast-check'] }),
    await post(ctx, token, '/users/me/experiences', { company: 'ACME', position: 'Engineer', startDate: '2020-02-01' }),
    await post(ctx, token, '/users/me/education', { institution: 'Uni', degree: 'BSc', fieldOfStudy: 'CS', startDate: '2015-09-01' }),
  ]

  const webhook = await post(ctx, token, '/admin/webhooks', { url: 'http://127.0.0.1:9/fuzz' })
  const delivery = await post(ctx, token, `/admin/webhooks/${webhook.id}/test`, {})
  const orders = [await orderIn(ctx, 'pending'), await orderIn(ctx, 'delivered'), await orderIn(ctx, 'completed')]
  const completed = orders[2]!
  const reviewed = await post(ctx, completed.buyer.accessToken, '/reviews', { orderId: completed.orderId, rating: 5 })
  const asked = await openRequest(ctx, orders[1]!.seller.accessToken, orders[1]!.orderId, { type: 'partial_refund', amount: 5 })

  const downloadPath = (url: string) => new URL(url, 'http://x').pathname.replace(/^\/api\/v1\/uploads\//, '')
  return {
    superuser,
    other,
    png: image,
    categoryIds: [category.id, subcategory.id],
    categorySlugs: ['fuzz-category', 'fuzz-sub'],
    roleIds: [role.id],
    serviceIds: services.map((row) => row.id),
    uploadIds: [upload.id, ...images.map((row) => row.id)],
    uploadPaths: [downloadPath(upload.url), ...images.map((row) => downloadPath(row.url))],
    portfolioIds: portfolio.map((row) => row.id),
    webhookIds: [webhook.id],
    deliveryIds: [delivery.id],
    orderIds: orders.map((order) => order.orderId),
    reviewIds: [reviewed.id],
    requestIds: [asked.id],
  }
}

/** Real values by parameter or field name; schema-derived values are mixed in by the caller. */
export function knownValues(fixtures: Fixtures): KnownValues {
  const users = [fixtures.other.user.id, fixtures.superuser.user.id]
  const byName: Record<string, string[]> = {
    serviceId: fixtures.serviceIds,
    categoryId: [...fixtures.categoryIds, ...fixtures.categorySlugs],
    category: [...fixtures.categorySlugs, ...fixtures.categoryIds],
    parentId: fixtures.categoryIds,
    roleId: fixtures.roleIds,
    roleIds: fixtures.roleIds,
    userId: users,
    sellerId: users,
    id: fixtures.portfolioIds,
    orderId: fixtures.orderIds,
    reviewId: fixtures.reviewIds,
    requestId: fixtures.requestIds,
    buyerId: users,
    uploadId: fixtures.uploadIds,
    webhookId: fixtures.webhookIds,
    deliveryId: fixtures.deliveryIds,
    bannerId: fixtures.uploadIds,
    imageIds: fixtures.uploadIds,
    avatar: fixtures.uploadIds,
    path: fixtures.uploadPaths,
    // The other account's session: refreshing or revoking it leaves the caller's own session alone.
    refresh: [fixtures.other.refreshToken],
    refreshToken: [fixtures.other.refreshToken],
    email: [fixtures.other.user.email],
    // Usernames are fixed after registration: the caller's own is the one value PUT /users/me takes.
    username: [fixtures.superuser.user.username],
  }
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
  return (name: string, schema: Schema) => (byName[name] ?? []).filter((value) => schema.format !== 'uuid' || uuid.test(value))
}
