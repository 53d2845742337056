import { expect } from 'vitest'
import { newId } from '../../src/lib/ids.ts'
import { categories } from '../../src/modules/catalogue/categories.table.ts'
import { request, type TestContext } from '../setup/test-app.ts'
import { unique } from './users.ts'

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
