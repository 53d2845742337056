import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import { newId } from '../../src/lib/ids.ts'
import { categories } from '../../src/modules/catalogue/categories.table.ts'
import { services } from '../../src/modules/catalogue/services.table.ts'
import { users } from '../../src/modules/users/users.table.ts'
import { request, type TestContext } from '../setup/test-app.ts'
import { createUser, unique } from './users.ts'

/** Inserts a top-level category with a unique slug and returns its id. */
export async function createCategory(ctx: TestContext, name = 'Logo Design'): Promise<string> {
  const now = ctx.clock.now()
  const id = newId()
  await ctx.database.db.insert(categories).values({ id, name, slug: unique('cat-'), createdAt: now, updatedAt: now })
  return id
}

/** The smallest valid body of `POST /services` and `PUT /services/{id}`. */
export const serviceBody = (categoryId: string, overrides: Record<string, unknown> = {}) => ({
  title: 'I will design a modern logo',
  description: 'A professional logo for your brand, with source files included.',
  categoryId,
  packages: [{ name: 'Basic', price: 25, deliveryDays: 3, revisions: 2 }],
  ...overrides,
})

/** Publishes a service through the API (it starts pending) and returns its id. */
export async function publishService(ctx: TestContext, token: string, categoryId: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const created = await request(ctx.app, { method: 'POST', url: '/services', token, payload: serviceBody(categoryId, overrides) })
  expect(created.statusCode, created.body).toBe(201)
  return created.json().data.id as string
}

type Level = 'new' | 'level_one' | 'level_two' | 'top_rated'

/**
 * Six services of three sellers at known levels, prices, delivery times, ratings and tags, in a
 * category, its subcategory and another category; one of them paused. The keys of `ids`:
 * express (top rated, subcategory, 20.00, 1 day, 4.8, logo vector), website (top rated, category,
 * 60.00, 3 days, 4.2, web), cards (level one, other, 120.00, 5 days, 3.5, print), mascot (level
 * one, subcategory, 300.00, 10 days, unrated, logo), flyer (new, other, 30.00 in 7 days and 80.00
 * in 1, 4.0, print flyer), paused (new, other, paused).
 */
export async function createListings(ctx: TestContext) {
  const now = ctx.clock.now()
  const parent = { id: newId(), slug: unique('design-') }
  const child = { id: newId(), slug: unique('logos-') }
  const other = { id: newId(), slug: unique('print-') }
  await ctx.database.db.insert(categories).values([
    { id: parent.id, name: 'Design', slug: parent.slug, createdAt: now, updatedAt: now },
    { id: child.id, parentId: parent.id, name: 'Logos', slug: child.slug, createdAt: now, updatedAt: now },
    { id: other.id, name: 'Print', slug: other.slug, createdAt: now, updatedAt: now },
  ])
  const moderator = (await createUser(ctx, { permissions: ['view_services', 'approve_services'] })).accessToken
  const seller = async (level: Level) => {
    const created = await createUser(ctx)
    await ctx.database.db.update(users).set({ sellerLevel: level }).where(eq(users.id, created.user.id))
    return { id: created.user.id, token: created.accessToken }
  }
  const sellers = { top: await seller('top_rated'), one: await seller('level_one'), fresh: await seller('new') }
  const ids: Record<string, string> = {}
  const publish = async (key: string, owner: { token: string }, fields: { title: string; categoryId: string; packages: [number, number][]; tags: string[]; rating?: number }) => {
    ctx.clock.advance(1000)
    const response = await request(ctx.app, {
      method: 'POST',
      url: '/services',
      token: owner.token,
      payload: {
        title: fields.title,
        description: `${fields.title}: a service written for the filter tests, with enough words.`,
        categoryId: fields.categoryId,
        tags: fields.tags,
        packages: fields.packages.map(([price, deliveryDays], index) => ({ name: `Package ${index}`, price, deliveryDays, revisions: 1 })),
      },
    })
    expect(response.statusCode, response.body).toBe(201)
    ids[key] = response.json().data.id
    expect((await request(ctx.app, { method: 'POST', url: `/admin/services/${ids[key]}/approve`, token: moderator })).statusCode).toBe(200)
    if (fields.rating !== undefined) await ctx.database.db.update(services).set({ ratingAverage: fields.rating, ratingCount: 3 }).where(eq(services.id, ids[key]!))
  }
  await publish('express', sellers.top, { title: 'Logo design express', categoryId: child.id, packages: [[20, 1]], tags: ['logo', 'vector'], rating: 4.8 })
  await publish('website', sellers.top, { title: 'Website landing page', categoryId: parent.id, packages: [[60, 3]], tags: ['web'], rating: 4.2 })
  await publish('cards', sellers.one, { title: 'Business cards printing', categoryId: other.id, packages: [[120, 5]], tags: ['print'], rating: 3.5 })
  await publish('mascot', sellers.one, { title: 'Mascot logo illustration', categoryId: child.id, packages: [[300, 10]], tags: ['logo'] })
  // The cheapest package (30.00, seven days) sets the delivery, not the quicker dearer one.
  await publish('flyer', sellers.fresh, { title: 'Flyer design for events', categoryId: other.id, packages: [[80, 1], [30, 7]], tags: ['print', 'flyer'], rating: 4.0 })
  await publish('paused', sellers.fresh, { title: 'Paused poster design', categoryId: other.id, packages: [[15, 1]], tags: ['logo'], rating: 5 })
  expect((await request(ctx.app, { method: 'POST', url: `/services/${ids.paused}/pause`, token: sellers.fresh.token })).statusCode).toBe(200)
  return { parent, child, other, sellers, ids }
}

export type Listings = Awaited<ReturnType<typeof createListings>>
