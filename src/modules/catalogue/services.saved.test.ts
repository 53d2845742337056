import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCategory, publishService } from '../../../test/factories/services.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { users } from '../users/users.table.ts'
import { savedServices } from './saved-services.table.ts'
import { services } from './services.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

interface SavedPage {
  items: { id: string; sellerLevel: string; seller: { id: string } }[]
  pagination: { page: number; limit: number; total: number; pages: number; hasNext: boolean; hasPrev: boolean }
}

describe('saved services (PUT/DELETE /services/{id}/saved, GET /users/me/saved)', () => {
  let ctx: TestContext
  let categoryId: string
  let seller: TestUser
  let buyer: TestUser
  let other: TestUser
  let moderator: string

  beforeAll(async () => {
    ctx = await createTestApp()
    categoryId = await createCategory(ctx)
    seller = await createUser(ctx)
    buyer = await createUser(ctx)
    other = await createUser(ctx)
    moderator = (await createUser(ctx, { permissions: ['view_services', 'approve_services'] })).accessToken
    await ctx.database.db.update(users).set({ sellerLevel: 'level_two' }).where(eq(users.id, seller.user.id))
  })
  afterAll(() => ctx.close())

  const activeService = async (title = 'I will design a modern logo') => {
    ctx.clock.advance(1000)
    const id = await publishService(ctx, seller.accessToken, categoryId, { title })
    expect((await request(ctx.app, { method: 'POST', url: `/admin/services/${id}/approve`, token: moderator })).statusCode).toBe(200)
    return id
  }
  const save = (id: string, token = buyer.accessToken) => request(ctx.app, { method: 'PUT', url: `/services/${id}/saved`, token })
  const unsave = (id: string, token = buyer.accessToken) => request(ctx.app, { method: 'DELETE', url: `/services/${id}/saved`, token })
  const savedList = async (token = buyer.accessToken, query = ''): Promise<SavedPage> => {
    const response = await request(ctx.app, { method: 'GET', url: `/users/me/saved${query}`, token })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data
  }
  const service = async (id: string, token?: string) => {
    const response = await request(ctx.app, { method: 'GET', url: `/services/${id}`, token })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data as { savedCount: number; saved: boolean; sellerLevel: string }
  }
  const rowsOf = (id: string) => ctx.database.db.select().from(savedServices).where(eq(savedServices.serviceId, id))

  it('saves a service once however often it is put (204, no body), and counts it once', async () => {
    const id = await activeService()
    for (let attempt = 0; attempt < 3; attempt++) {
      const response = await save(id)
      expect(response.statusCode, response.body).toBe(204)
      expect(response.body).toBe('')
    }
    expect(await rowsOf(id)).toHaveLength(1)
    expect(await service(id, buyer.accessToken)).toMatchObject({ savedCount: 1, saved: true })
    expect((await savedList()).items.map((item) => item.id)).toContain(id)
  })

  it('removes a saved service however often it is deleted (204), and counts it down once', async () => {
    const id = await activeService()
    expect((await save(id)).statusCode).toBe(204)
    expect((await save(id, other.accessToken)).statusCode).toBe(204)
    expect((await service(id)).savedCount).toBe(2)
    for (let attempt = 0; attempt < 3; attempt++) expect((await unsave(id)).statusCode).toBe(204)
    expect(await service(id, buyer.accessToken)).toMatchObject({ savedCount: 1, saved: false })
    expect(await service(id, other.accessToken)).toMatchObject({ savedCount: 1, saved: true })
    expect((await savedList()).items.map((item) => item.id)).not.toContain(id)
  })

  it('keeps the counter exact under concurrent saves and removals', async () => {
    const id = await activeService()
    const savers = [buyer, other, seller, await createUser(ctx), await createUser(ctx)]
    const answers = await Promise.all(savers.flatMap((user) => [save(id, user.accessToken), save(id, user.accessToken)]))
    expect(answers.map((answer) => answer.statusCode)).toEqual(savers.flatMap(() => [204, 204]))
    expect((await service(id)).savedCount).toBe(savers.length)
    expect(await rowsOf(id)).toHaveLength(savers.length)
    await Promise.all(savers.slice(0, 3).flatMap((user) => [unsave(id, user.accessToken), unsave(id, user.accessToken)]))
    const [stored] = await ctx.database.db.select({ savedCount: services.savedCount }).from(services).where(eq(services.id, id))
    expect(stored!.savedCount).toBe(2)
    expect(await rowsOf(id)).toHaveLength(2)
  })

  it('says saved false to an anonymous caller, and to a caller who did not save it; savedCount to everyone', async () => {
    const id = await activeService()
    expect((await save(id)).statusCode).toBe(204)
    expect(await service(id)).toMatchObject({ savedCount: 1, saved: false })
    expect(await service(id, other.accessToken)).toMatchObject({ savedCount: 1, saved: false })
    expect(await service(id, buyer.accessToken)).toMatchObject({ savedCount: 1, saved: true })
  })

  it("answers the owner's writes with savedCount and saved as the owner sees them", async () => {
    const id = await activeService()
    expect((await save(id, seller.accessToken)).statusCode).toBe(204)
    expect((await save(id)).statusCode).toBe(204)
    const paused = await request(ctx.app, { method: 'POST', url: `/services/${id}/pause`, token: seller.accessToken })
    expect(paused.json().data).toMatchObject({ status: 'paused', savedCount: 2, saved: true, sellerLevel: 'level_two' })
    const resumed = await request(ctx.app, { method: 'POST', url: `/services/${id}/resume`, token: seller.accessToken })
    expect(resumed.json().data).toMatchObject({ status: 'active', savedCount: 2, saved: true })
  })

  it('lists the saved services newest saved first, as lists show them, paged', async () => {
    const lister = await createUser(ctx)
    const ids = [await activeService('I will write a blog post'), await activeService('I will edit a podcast'), await activeService('I will build a landing page')]
    for (const id of [ids[1]!, ids[0]!, ids[2]!]) {
      ctx.clock.advance(1000)
      expect((await save(id, lister.accessToken)).statusCode).toBe(204)
    }
    const all = await savedList(lister.accessToken)
    expect(all.items.map((item) => item.id)).toEqual([ids[2], ids[0], ids[1]])
    expect(all.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1, hasNext: false, hasPrev: false })
    const listed = (await request(ctx.app, { method: 'GET', url: `/services?sellerId=${seller.user.id}&limit=100` })).json().data.items as { id: string }[]
    expect(all.items[0]).toEqual(listed.find((item) => item.id === ids[2]))
    expect(all.items[0]).toMatchObject({ sellerLevel: 'level_two', seller: { id: seller.user.id } })

    const first = await savedList(lister.accessToken, '?limit=2')
    const second = await savedList(lister.accessToken, '?limit=2&page=2')
    expect(first.items.map((item) => item.id)).toEqual([ids[2], ids[0]])
    expect(first.pagination).toMatchObject({ total: 3, pages: 2, hasNext: true, hasPrev: false })
    expect(second.items.map((item) => item.id)).toEqual([ids[1]])
    expect(second.pagination).toMatchObject({ total: 3, hasNext: false, hasPrev: true })
  })

  it('leaves paused, pending and deleted services out of the list without error, and shows a resumed one again', async () => {
    const lister = await createUser(ctx)
    const [kept, paused, edited, deleted] = [await activeService(), await activeService(), await activeService(), await activeService()]
    for (const id of [kept, paused, edited, deleted]) expect((await save(id, lister.accessToken)).statusCode).toBe(204)
    expect((await request(ctx.app, { method: 'POST', url: `/services/${paused}/pause`, token: seller.accessToken })).statusCode).toBe(200)
    const body = { title: 'I will design a new logo', description: 'An edited service, waiting for review again.', categoryId, packages: [{ name: 'Basic', price: 30, deliveryDays: 2, revisions: 1 }] }
    expect((await request(ctx.app, { method: 'PUT', url: `/services/${edited}`, token: seller.accessToken, payload: body })).statusCode).toBe(200)
    expect((await request(ctx.app, { method: 'DELETE', url: `/services/${deleted}`, token: seller.accessToken })).statusCode).toBe(200)

    const list = await savedList(lister.accessToken)
    expect(list.items.map((item) => item.id)).toEqual([kept])
    expect(list.pagination.total).toBe(1)
    // Still saved, not shown: the row stays, and the service comes back once active again.
    expect(await ctx.database.db.select().from(savedServices).where(eq(savedServices.userId, lister.user.id))).toHaveLength(4)
    expect((await request(ctx.app, { method: 'POST', url: `/services/${paused}/resume`, token: seller.accessToken })).statusCode).toBe(200)
    expect((await savedList(lister.accessToken)).items.map((item) => item.id).sort()).toEqual([kept, paused].sort())
  })

  it('answers 404 to saving a service the caller may not see, and saves nothing', async () => {
    const pending = await publishService(ctx, seller.accessToken, categoryId)
    const deleted = await activeService()
    expect((await request(ctx.app, { method: 'DELETE', url: `/services/${deleted}`, token: seller.accessToken })).statusCode).toBe(200)
    for (const id of [pending, deleted, UNKNOWN_ID]) {
      expectError(await save(id), 404, 'NOT_FOUND')
      expectError(await unsave(id), 404, 'NOT_FOUND')
    }
    expectError(await request(ctx.app, { method: 'PUT', url: '/services/not-an-id/saved', token: buyer.accessToken }), 404, 'NOT_FOUND')
    expect(await ctx.database.db.select().from(savedServices).where(and(eq(savedServices.userId, buyer.user.id), eq(savedServices.serviceId, pending)))).toHaveLength(0)
    // Its owner and staff see a pending service, so they may save it.
    expect((await save(pending, seller.accessToken)).statusCode).toBe(204)
  })

  it('removes a service the caller saved even once it is paused or deleted', async () => {
    const id = await activeService()
    expect((await save(id)).statusCode).toBe(204)
    expect((await request(ctx.app, { method: 'DELETE', url: `/services/${id}`, token: seller.accessToken })).statusCode).toBe(200)
    expect((await unsave(id)).statusCode).toBe(204)
    expect(await rowsOf(id)).toHaveLength(0)
    expectError(await unsave(id), 404, 'NOT_FOUND')
  })

  it('answers 401 without a token', async () => {
    const id = await activeService()
    expectError(await request(ctx.app, { method: 'PUT', url: `/services/${id}/saved` }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${id}/saved` }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'GET', url: '/users/me/saved' }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'PUT', url: `/services/${id}/saved`, token: 'not-a-token' }), 401, 'UNAUTHENTICATED')
  })

  it("never shows one person's saved list to another", async () => {
    const id = await activeService()
    const alone = await createUser(ctx)
    expect((await save(id, alone.accessToken)).statusCode).toBe(204)
    expect((await savedList(other.accessToken)).items.map((item) => item.id)).not.toContain(id)
    expect((await savedList(alone.accessToken)).items.map((item) => item.id)).toEqual([id])
    expect(await service(id, other.accessToken)).toMatchObject({ saved: false, savedCount: 1 })
    // A list of services never says who saved them.
    const listed = (await request(ctx.app, { method: 'GET', url: `/services?sellerId=${seller.user.id}&limit=100`, token: alone.accessToken })).json().data.items as Record<string, unknown>[]
    expect(listed.find((item) => item.id === id)).not.toHaveProperty('saved')
  })

  it('refuses bad paging of the list (400 on the field)', async () => {
    const token = buyer.accessToken
    expectError(await request(ctx.app, { method: 'GET', url: '/users/me/saved?limit=0', token }), 400, 'VALIDATION_ERROR', ['limit'])
    expectError(await request(ctx.app, { method: 'GET', url: '/users/me/saved?page=0', token }), 400, 'VALIDATION_ERROR', ['page'])
    expectError(await request(ctx.app, { method: 'GET', url: '/users/me/saved?sort=new', token }), 400, 'VALIDATION_ERROR', ['sort'])
  })
})
