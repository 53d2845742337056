import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { publishService } from '../../../test/factories/services.ts'
import { createSuperuser, createUser, unique } from '../../../test/factories/users.ts'
import { twoInstances } from '../../../test/setup/instances.ts'
import { createTestApp, request, TEST_REDIS_URL, type TestContext } from '../../../test/setup/test-app.ts'
import { newId } from '../../lib/ids.ts'
import { categories } from './categories.table.ts'
import { CATEGORY_TREE_TTL_MS } from './category-tree.cache.ts'
import { services } from './services.table.ts'

interface NodeJson {
  id: string
  name: string
  slug: string
  servicesCount: number
  subcategories: NodeJson[]
}

const STRONG_TAG = /^"[A-Za-z0-9_-]{27}"$/

/** Staff and a seller on `ctx`, with the calls these tests make through the API. */
async function actorsOf(ctx: TestContext) {
  const admin = (await createSuperuser(ctx)).accessToken
  const moderator = (await createUser(ctx, { permissions: ['view_services', 'approve_services'] })).accessToken
  const seller = await createUser(ctx)
  return {
    admin,
    seller,
    async createCategory(on: TestContext, payload: Record<string, unknown>): Promise<NodeJson> {
      const response = await request(on.app, { method: 'POST', url: '/categories', token: admin, payload })
      expect(response.statusCode, response.body).toBe(201)
      return response.json().data
    },
    async approve(on: TestContext, serviceId: string) {
      expect((await request(on.app, { method: 'POST', url: `/admin/services/${serviceId}/approve`, token: moderator })).statusCode).toBe(200)
    },
    async pause(on: TestContext, serviceId: string) {
      expect((await request(on.app, { method: 'POST', url: `/services/${serviceId}/pause`, token: seller.accessToken })).statusCode).toBe(200)
    },
  }
}

const get = (ctx: TestContext, url: string, headers: Record<string, string> = {}) => request(ctx.app, { method: 'GET', url, headers })

async function treeOf(ctx: TestContext): Promise<NodeJson[]> {
  const response = await get(ctx, '/categories')
  expect(response.statusCode, response.body).toBe(200)
  return response.json().data
}

const findIn = (tree: NodeJson[], id: string): NodeJson | undefined => tree.flatMap((top) => [top, ...top.subcategories]).find((node) => node.id === id)

describe('the category tree kept in memory (one instance)', () => {
  let ctx: TestContext
  let actors: Awaited<ReturnType<typeof actorsOf>>

  beforeAll(async () => {
    ctx = await createTestApp()
    actors = await actorsOf(ctx)
  })
  afterAll(() => ctx.close())

  const etagOf = (response: LightMyRequestResponse) => response.headers.etag as string

  describe('ETag and 304', () => {
    it('answers the tree with a strong ETag, and 304 with no body to a matching If-None-Match', async () => {
      const first = await get(ctx, '/categories')
      expect(first.statusCode).toBe(200)
      expect(etagOf(first)).toMatch(STRONG_TAG)
      expect(first.headers['cache-control']).toBe('public, no-cache')

      const again = await get(ctx, '/categories', { 'if-none-match': etagOf(first) })
      expect(again.statusCode).toBe(304)
      expect(again.body).toBe('')
      expect(etagOf(again)).toBe(etagOf(first))
      // A tag a proxy weakened, or one in a list, still matches; another tag does not.
      expect((await get(ctx, '/categories', { 'if-none-match': `W/${etagOf(first)}` })).statusCode).toBe(304)
      expect((await get(ctx, '/categories', { 'if-none-match': `"other", ${etagOf(first)}` })).statusCode).toBe(304)
      const other = await get(ctx, '/categories', { 'if-none-match': '"other"' })
      expect(other.statusCode).toBe(200)
      expect(other.json()).toEqual(first.json())
    })

    it('changes the tag when the tree changes: the old tag gets the whole new tree', async () => {
      const before = await get(ctx, '/categories')
      const created = await actors.createCategory(ctx, { name: unique('Tagged ') })
      const after = await get(ctx, '/categories', { 'if-none-match': etagOf(before) })
      expect(after.statusCode).toBe(200)
      expect(etagOf(after)).toMatch(STRONG_TAG)
      expect(etagOf(after)).not.toBe(etagOf(before))
      expect(findIn(after.json().data, created.id)).toMatchObject({ name: created.name, servicesCount: 0 })
    })

    it('tags one category the same by id and by slug, and answers 304 to either', async () => {
      const top = await actors.createCategory(ctx, { name: unique('One ') })
      const sub = await actors.createCategory(ctx, { name: unique('Sub '), parentId: top.id })
      const byId = await get(ctx, `/categories/${sub.id}`)
      expect(byId.statusCode).toBe(200)
      expect(byId.json().data).toEqual({ ...(await get(ctx, `/categories/${sub.slug}`)).json().data })
      expect(byId.json().data).toMatchObject({ id: sub.id, subcategories: [], parent: { id: top.id, name: top.name, slug: top.slug } })
      expect(etagOf(byId)).toMatch(STRONG_TAG)
      expect(etagOf(await get(ctx, `/categories/${sub.slug}`))).toBe(etagOf(byId))
      expect(etagOf(await get(ctx, `/categories/${sub.id.toUpperCase()}`))).toBe(etagOf(byId))
      const cached = await get(ctx, `/categories/${sub.slug}`, { 'if-none-match': etagOf(byId) })
      expect(cached.statusCode).toBe(304)
      expect(cached.body).toBe('')
      expect(etagOf(await get(ctx, `/categories/${top.id}`))).not.toBe(etagOf(byId))
    })

    it('gives the bare answer a tag of its own', async () => {
      const wrapped = await get(ctx, '/categories')
      const bare = await get(ctx, '/categories', { prefer: 'envelope=none' })
      expect(bare.statusCode).toBe(200)
      expect(bare.json()).toEqual(wrapped.json().data)
      expect(etagOf(bare)).toMatch(/^"[A-Za-z0-9_-]{27}-bare"$/)
      expect((await get(ctx, '/categories', { prefer: 'envelope=none', 'if-none-match': etagOf(wrapped) })).statusCode).toBe(200)
      expect((await get(ctx, '/categories', { prefer: 'envelope=none', 'if-none-match': etagOf(bare) })).statusCode).toBe(304)
      expect((await get(ctx, '/categories', { 'if-none-match': etagOf(bare) })).statusCode).toBe(200)
    })

    it('still answers 404 for a category that does not exist', async () => {
      const response = await get(ctx, '/categories/no-such-category-here', { 'if-none-match': '*' })
      expect(response.statusCode).toBe(404)
      expect(response.json().error.code).toBe('NOT_FOUND')
    })
  })

  describe('counts', () => {
    it('moves a category\'s count on approve, pause and resume through the API at once', async () => {
      const top = await actors.createCategory(ctx, { name: unique('Counted ') })
      const sub = await actors.createCategory(ctx, { name: unique('Counted sub '), parentId: top.id })
      const counts = async () => {
        const tree = await treeOf(ctx)
        return [findIn(tree, top.id)!.servicesCount, findIn(tree, sub.id)!.servicesCount]
      }
      expect(await counts()).toEqual([0, 0])
      const id = await publishService(ctx, actors.seller.accessToken, sub.id)
      expect(await counts()).toEqual([0, 0])
      await actors.approve(ctx, id)
      expect(await counts()).toEqual([1, 1])
      expect((await get(ctx, `/categories/${sub.id}`)).json().data.servicesCount).toBe(1)
      await actors.pause(ctx, id)
      expect(await counts()).toEqual([0, 0])
      expect((await get(ctx, `/categories/${top.id}`)).json().data.servicesCount).toBe(0)
      expect((await request(ctx.app, { method: 'POST', url: `/services/${id}/resume`, token: actors.seller.accessToken })).statusCode).toBe(200)
      expect(await counts()).toEqual([1, 1])
      expect((await request(ctx.app, { method: 'DELETE', url: `/services/${id}`, token: actors.seller.accessToken })).statusCode).toBe(200)
      expect(await counts()).toEqual([0, 0])
    })

    it('shows a change written around the API once the tree is as old as the bound, not before', async () => {
      const top = await actors.createCategory(ctx, { name: unique('Around ') })
      expect(findIn(await treeOf(ctx), top.id)!.servicesCount).toBe(0)
      const now = ctx.clock.now()
      await ctx.database.db.insert(services).values({
        id: newId(),
        sellerId: actors.seller.user.id,
        categoryId: top.id,
        title: 'Written straight to the table',
        description: 'A service the API did not write.',
        status: 'active',
        startingPriceCents: 1000,
        createdAt: now,
        updatedAt: now,
      })
      ctx.clock.advance(CATEGORY_TREE_TTL_MS - 1)
      expect(findIn(await treeOf(ctx), top.id)!.servicesCount, 'served from memory').toBe(0)
      ctx.clock.advance(1)
      expect(findIn(await treeOf(ctx), top.id)!.servicesCount).toBe(1)
    })

    it('finds a category written around the API by id at once, and then lists it', async () => {
      await treeOf(ctx)
      const now = ctx.clock.now()
      const id = newId()
      const slug = unique('around-')
      await ctx.database.db.insert(categories).values({ id, name: 'Written around', slug, createdAt: now, updatedAt: now })
      expect(findIn(await treeOf(ctx), id), 'the kept tree').toBeUndefined()
      const response = await get(ctx, `/categories/${slug}`)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toMatchObject({ id, slug, parent: null, subcategories: [], servicesCount: 0 })
      expect(findIn(await treeOf(ctx), id)).toMatchObject({ id, slug })
    })

    it('answers a third level written around the API from the database, with its parent', async () => {
      const top = await actors.createCategory(ctx, { name: unique('Level one ') })
      const sub = await actors.createCategory(ctx, { name: unique('Level two '), parentId: top.id })
      const now = ctx.clock.now()
      const id = newId()
      await ctx.database.db.insert(categories).values({ id, parentId: sub.id, name: 'Level three', slug: unique('level-three-'), createdAt: now, updatedAt: now })
      const response = await get(ctx, `/categories/${id}`)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toMatchObject({ id, parentId: sub.id, subcategories: [], parent: { id: sub.id, name: sub.name, slug: sub.slug } })
      expect(response.headers.etag).toMatch(STRONG_TAG)
    })
  })
})

// PostgreSQL and Redis only: two API instances share one database and one Redis, as behind a load balancer.
describe.runIf(inject('pgTemplate') && TEST_REDIS_URL)('the category tree on two instances sharing PostgreSQL and Redis', () => {
  const instances = twoInstances({ REDIS_URL: TEST_REDIS_URL })
  let actors: Awaited<ReturnType<typeof actorsOf>>
  beforeAll(async () => {
    actors = await actorsOf(instances.first)
  })

  /**
   * Waits, at most the bound on staleness, for instance 2 to answer what `expected` says. The test
   * clocks stand still, so the tree's age never reaches the bound: only the signal can drop it.
   */
  const seenBySecond = (expected: (tree: NodeJson[]) => void) => vi.waitFor(async () => expected(await treeOf(instances.second)), { timeout: CATEGORY_TREE_TTL_MS, interval: 20 })

  it('shows a category created, renamed and deleted through instance 1 on instance 2 within the bound', async () => {
    expect(instances.second.app.container.realtime.kind).toBe('redis')
    await treeOf(instances.second)
    const created = await actors.createCategory(instances.first, { name: unique('Across ') })
    await seenBySecond((tree) => expect(findIn(tree, created.id)).toMatchObject({ name: created.name }))

    const renamed = await request(instances.first.app, { method: 'PUT', url: `/categories/${created.id}`, token: actors.admin, payload: { name: 'Renamed across' } })
    expect(renamed.statusCode).toBe(200)
    await seenBySecond((tree) => expect(findIn(tree, created.id)?.name).toBe('Renamed across'))
    await vi.waitFor(async () => expect((await get(instances.second, `/categories/${created.id}`)).json().data.name).toBe('Renamed across'), { timeout: CATEGORY_TREE_TTL_MS, interval: 20 })

    expect((await request(instances.first.app, { method: 'DELETE', url: `/categories/${created.id}`, token: actors.admin })).statusCode).toBe(200)
    await seenBySecond((tree) => expect(findIn(tree, created.id)).toBeUndefined())
  })

  it('moves the counts on instance 2 when instance 1 approves and pauses a service', async () => {
    const top = await actors.createCategory(instances.first, { name: unique('Counted across ') })
    const id = await publishService(instances.first, actors.seller.accessToken, top.id)
    await seenBySecond((tree) => expect(findIn(tree, top.id)?.servicesCount).toBe(0))
    await actors.approve(instances.first, id)
    await seenBySecond((tree) => expect(findIn(tree, top.id)?.servicesCount).toBe(1))
    await actors.pause(instances.first, id)
    await seenBySecond((tree) => expect(findIn(tree, top.id)?.servicesCount).toBe(0))
  })

  it('tags the same tree the same on both instances, so a tag from one is current on the other', async () => {
    const created = await actors.createCategory(instances.first, { name: unique('Same tag ') })
    await seenBySecond((tree) => expect(findIn(tree, created.id)).toBeDefined())
    const fromFirst = await get(instances.first, '/categories')
    const onSecond = await get(instances.second, '/categories', { 'if-none-match': fromFirst.headers.etag as string })
    expect(onSecond.statusCode).toBe(304)
  })
})
