import { eq } from 'drizzle-orm'
import type { LightMyRequestResponse } from 'fastify'
import { untilAQueryWaitsForALock } from '../../../test/setup/locks.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createSuperuser, createUser, unique } from '../../../test/factories/users.ts'
import { newId } from '../../lib/ids.ts'
import { permissions } from '../../access/access.ts'
import { categories } from './categories.table.ts'
import { services, type ServiceStatus } from './services.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

interface NodeJson {
  id: string
  name: string
  slug: string
  description: string
  parentId: string | null
  position: number
  servicesCount: number
}
interface TreeItemJson extends NodeJson {
  subcategories: NodeJson[]
}
interface CategoryJson extends TreeItemJson {
  parent: { id: string; name: string; slug: string } | null
}

const NODE_KEYS = ['description', 'id', 'name', 'parentId', 'position', 'servicesCount', 'slug']
const DEFAULT_TOP_LEVEL = ['Graphics & Design', 'Programming & Tech', 'Digital Marketing', 'Writing & Translation', 'Video & Animation', 'Music & Audio', 'Business', 'AI Services']

describe('categories routes', () => {
  let ctx: TestContext
  let admin: string
  let allPowerfulStaff: string
  let client: string
  let sellerId: string

  beforeAll(async () => {
    ctx = await createTestApp()
    admin = (await createSuperuser(ctx)).accessToken
    allPowerfulStaff = (await createUser(ctx, { permissions: [...permissions] })).accessToken
    const clientUser = await createUser(ctx)
    client = clientUser.accessToken
    sellerId = clientUser.user.id
  })
  afterAll(() => ctx.close())

  const categoryRow = async (id: string) => {
    const [row] = await ctx.database.db.select().from(categories).where(eq(categories.id, id))
    return row
  }

  const create = async (payload: Record<string, unknown>): Promise<CategoryJson> => {
    const response = await request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload })
    expect(response.statusCode).toBe(201)
    return response.json().data
  }

  const createTop = (extra: Record<string, unknown> = {}) => create({ name: unique('Top '), ...extra })
  const createSub = (parentId: string, extra: Record<string, unknown> = {}) => create({ name: unique('Sub '), parentId, ...extra })

  const addService = async (categoryId: string, status: ServiceStatus, deleted = false): Promise<string> => {
    const now = ctx.clock.now()
    const id = newId()
    await ctx.database.db.insert(services).values({
      id,
      sellerId,
      categoryId,
      title: `Service ${unique()}`,
      description: 'A service used to count categories.',
      status,
      startingPriceCents: 1000,
      deletedAt: deleted ? now : null,
      createdAt: now,
      updatedAt: now,
    })
    return id
  }

  const tree = async (): Promise<TreeItemJson[]> => {
    const response = await request(ctx.app, { method: 'GET', url: '/categories' })
    expect(response.statusCode).toBe(200)
    expect(response.json().success).toBe(true)
    return response.json().data
  }

  const getOne = (idOrSlug: string) => request(ctx.app, { method: 'GET', url: `/categories/${idOrSlug}` })

  describe('GET /categories (public)', () => {
    it('answers the default taxonomy: eight top-level categories in order, each with subcategories', async () => {
      const items = await tree()
      const defaults = items.filter((item) => DEFAULT_TOP_LEVEL.includes(item.name))
      expect(defaults.map((item) => item.name)).toEqual(DEFAULT_TOP_LEVEL)
      expect(items.slice(0, 8).map((item) => item.name)).toEqual(DEFAULT_TOP_LEVEL)
      for (const item of defaults) {
        expect(item.parentId).toBeNull()
        expect(item.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
        expect(item.subcategories.length).toBeGreaterThanOrEqual(3)
        expect(item.subcategories.length).toBeLessThanOrEqual(5)
        for (const sub of item.subcategories) {
          expect(Object.keys(sub).sort()).toEqual(NODE_KEYS)
          expect(sub.parentId).toBe(item.id)
          expect(sub.description.length).toBeGreaterThan(0)
        }
        const positions = item.subcategories.map((sub) => sub.position)
        expect(positions).toEqual([...positions].sort((a, b) => a - b))
      }
      expect(Object.keys(items[0]!).sort()).toEqual([...NODE_KEYS, 'subcategories'].sort())
      expect(defaults.flatMap((item) => item.subcategories.map((sub) => sub.slug))).toEqual(expect.arrayContaining(['logo-design', 'website-development', 'seo', 'translation']))
    })

    it('answers the same order on every call, ordering ties in position by name', async () => {
      const position = 900
      const zebra = await createTop({ name: `Zebra ${unique()}`, position })
      const alpha = await createTop({ name: `Alpha ${unique()}`, position })
      const subB = await createSub(alpha.id, { name: 'Bravo sub', position: 1 })
      const subA = await createSub(alpha.id, { name: 'Alpha sub', position: 1 })
      const subFirst = await createSub(alpha.id, { name: 'Zulu sub', position: 0 })
      const first = await tree()
      expect(await tree()).toEqual(first)
      const ids = first.map((item) => item.id)
      expect(ids.indexOf(alpha.id)).toBe(ids.indexOf(zebra.id) - 1)
      expect(first.find((item) => item.id === alpha.id)!.subcategories.map((sub) => sub.id)).toEqual([subFirst.id, subA.id, subB.id])
      expect(first.every((item) => item.parentId === null)).toBe(true)
    })

    it('counts only active, not deleted services, and a parent counts its subcategories', async () => {
      const top = await createTop()
      const sub1 = await createSub(top.id)
      const sub2 = await createSub(top.id)
      await addService(top.id, 'active')
      await addService(sub1.id, 'active')
      await addService(sub1.id, 'active')
      await addService(sub2.id, 'active')
      for (const status of ['pending', 'paused', 'rejected'] as const) {
        await addService(top.id, status)
        await addService(sub2.id, status)
      }
      await addService(sub1.id, 'active', true)
      await addService(top.id, 'active', true)

      const item = (await tree()).find((candidate) => candidate.id === top.id)!
      expect(item.servicesCount).toBe(4)
      expect(item.subcategories.map((sub) => [sub.id, sub.servicesCount])).toEqual([
        [sub1.id, 2],
        [sub2.id, 1],
      ])

      const detail = (await getOne(top.id)).json().data as CategoryJson
      expect(detail.servicesCount).toBe(4)
      expect(detail.subcategories.map((sub) => sub.servicesCount)).toEqual([2, 1])
      expect((await getOne(sub1.id)).json().data.servicesCount).toBe(2)
    })

    it('answers zero for categories without services', async () => {
      const top = await createTop()
      await createSub(top.id)
      const item = (await tree()).find((candidate) => candidate.id === top.id)!
      expect(item.servicesCount).toBe(0)
      expect(item.subcategories[0]!.servicesCount).toBe(0)
    })
  })

  describe('GET /categories/:categoryId (public)', () => {
    it('finds a top-level category by id and by slug, with its subcategories and no parent', async () => {
      const top = await createTop({ description: 'Things to look up' })
      const sub = await createSub(top.id)
      for (const key of [top.id, top.slug, top.id.toUpperCase()]) {
        const response = await getOne(key)
        expect(response.statusCode).toBe(200)
        expect(response.json()).toEqual({
          success: true,
          data: {
            id: top.id,
            name: top.name,
            slug: top.slug,
            description: 'Things to look up',
            parentId: null,
            position: top.position,
            servicesCount: 0,
            subcategories: [{ id: sub.id, name: sub.name, slug: sub.slug, description: '', parentId: top.id, position: sub.position, servicesCount: 0 }],
            parent: null,
          },
        })
      }
    })

    it('answers a seeded subcategory by slug with its parent summary', async () => {
      const response = await getOne('logo-design')
      expect(response.statusCode).toBe(200)
      const data = response.json().data as CategoryJson
      expect(data.name).toBe('Logo Design')
      expect(data.subcategories).toEqual([])
      expect(data.parent).toEqual({ id: data.parentId, name: 'Graphics & Design', slug: 'graphics-design' })
    })

    it.each([
      ['an unknown id', UNKNOWN_ID],
      ['an unknown slug', 'no-such-category'],
      ['a malformed id', '1234-not-a-uuid!'],
      ['an uppercase slug', 'Logo-Design'],
      ['a slug with a double hyphen', 'logo--design'],
      ['a slug-shaped value of 100 characters', 'a'.repeat(100)],
      ['SQL', encodeURIComponent("' or 1=1 --")],
    ])('answers 404 NOT_FOUND for %s', async (_label, key) => {
      expectError(await getOne(key), 404, 'NOT_FOUND')
    })
  })

  describe('access to writes (superuser only)', () => {
    const calls = [
      { label: 'POST', method: 'POST', url: '/categories', payload: { name: 'Sneaky category' } },
      { label: 'PUT', method: 'PUT', url: '/categories/logo-design', payload: { name: 'Sneaky rename' } },
      { label: 'DELETE', method: 'DELETE', url: '/categories/logo-design' },
    ] as const

    it.each(calls)('refuses $label without a token (401 UNAUTHENTICATED)', async (call) => {
      const payload = 'payload' in call ? call.payload : undefined
      expectError(await request(ctx.app, { method: call.method, url: call.url, payload }), 401, 'UNAUTHENTICATED')
    })

    it.each(calls)('refuses a client on $label (403 FORBIDDEN)', async (call) => {
      const payload = 'payload' in call ? call.payload : undefined
      expectError(await request(ctx.app, { method: call.method, url: call.url, token: client, payload }), 403, 'FORBIDDEN')
    })

    it.each(calls)('refuses staff holding every permission but not superuser on $label (403 FORBIDDEN)', async (call) => {
      const payload = 'payload' in call ? call.payload : undefined
      expectError(await request(ctx.app, { method: call.method, url: call.url, token: allPowerfulStaff, payload }), 403, 'FORBIDDEN')
    })

    it('changes nothing when refused', async () => {
      const [before] = await ctx.database.db.select().from(categories).where(eq(categories.slug, 'logo-design'))
      const count = (await ctx.database.db.select().from(categories)).length
      for (const call of calls) {
        const payload = 'payload' in call ? call.payload : undefined
        await request(ctx.app, { method: call.method, url: call.url, token: allPowerfulStaff, payload })
      }
      expect(await categoryRow(before!.id)).toEqual(before)
      expect((await ctx.database.db.select().from(categories)).length).toBe(count)
    })
  })

  describe('POST /categories', () => {
    it('creates a top-level category (201), generating the slug and the position', async () => {
      const name = `Home & Garden ${unique()}`
      const response = await request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload: { name, description: 'Around the house' } })
      expect(response.statusCode).toBe(201)
      const data = response.json().data as CategoryJson
      expect(data).toMatchObject({ name, description: 'Around the house', parentId: null, servicesCount: 0, subcategories: [], parent: null })
      expect(data.slug).toBe(name.toLowerCase().replace(/[^a-z0-9]+/g, '-'))
      const row = await categoryRow(data.id)
      expect(row).toMatchObject({ name, slug: data.slug, parentId: null, description: 'Around the house', position: data.position })
      const others = (await tree()).filter((item) => item.id !== data.id)
      expect(data.position).toBe(Math.max(...others.map((item) => item.position)) + 1)
    })

    it('creates a subcategory with a given slug and position', async () => {
      const top = await createTop()
      const slug = unique('sub-').toLowerCase()
      const data = await create({ name: 'Accent Café', slug, parentId: top.id, position: 7 })
      expect(data).toMatchObject({ slug, parentId: top.id, position: 7, parent: { id: top.id, name: top.name, slug: top.slug } })
      expect(await categoryRow(data.id)).toMatchObject({ parentId: top.id, slug, position: 7, name: 'Accent Café' })
    })

    it('makes a free slug when the name\'s slug is taken', async () => {
      const name = `Same Name ${unique()}`
      const first = await create({ name })
      const second = await create({ name })
      expect(second.slug).toBe(`${first.slug}-2`)
    })

    it.each([
      ['a name of one character', { name: 'A' }, ['name']],
      ['a name of 61 characters', { name: 'n'.repeat(61) }, ['name']],
      ['a name with surrounding spaces', { name: ' Spaced ' }, ['name']],
      ['a missing name', {}, ['name']],
      ['a slug with capitals', { name: 'Good name', slug: 'Bad-Slug' }, ['slug']],
      ['a slug with a trailing hyphen', { name: 'Good name', slug: 'bad-' }, ['slug']],
      ['a slug of 61 characters', { name: 'Good name', slug: 's'.repeat(61) }, ['slug']],
      ['a slug shaped like an id', { name: 'Good name', slug: '0190a000-0000-7000-8000-00000000abce' }, ['slug']],
      ['a description of 501 characters', { name: 'Good name', description: 'd'.repeat(501) }, ['description']],
      ['a malformed parentId', { name: 'Good name', parentId: 'nope' }, ['parentId']],
      ['an unknown parentId', { name: 'Good name', parentId: UNKNOWN_ID }, ['parentId']],
      ['a position over 1000', { name: 'Good name', position: 1001 }, ['position']],
      ['a negative position', { name: 'Good name', position: -1 }, ['position']],
      ['a fractional position', { name: 'Good name', position: 1.5 }, ['position']],
      ['an unknown field', { name: 'Good name', icon: 'x' }, ['icon']],
    ])('refuses %s (400 on the field) and stores nothing', async (_label, payload, fields) => {
      const before = (await ctx.database.db.select().from(categories)).length
      expectError(await request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload }), 400, 'VALIDATION_ERROR', fields)
      expect((await ctx.database.db.select().from(categories)).length).toBe(before)
    })

    it('gives a name without Latin letters or digits the slug `category` or the next free `category-N` (any name the schema takes makes a slug)', async () => {
      const first = await request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload: { name: '!!!' } })
      expect(first.statusCode, first.body).toBe(201)
      const second = await request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload: { name: '日本語' } })
      expect(second.statusCode, second.body).toBe(201)
      const slugs = [first.json().data.slug, second.json().data.slug]
      for (const slug of slugs) expect(slug).toMatch(/^category(-\d+)?$/)
      expect(slugs[1]).not.toBe(slugs[0])
    })

    it('refuses a slug already used (400 on slug)', async () => {
      expectError(await request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload: { name: 'Another logo', slug: 'logo-design' } }), 400, 'VALIDATION_ERROR', ['slug'])
      expect(await ctx.database.db.select().from(categories).where(eq(categories.name, 'Another logo'))).toEqual([])
    })

    /**
     * Another transaction holds an uncommitted category with the slug while the request runs. On
     * PostgreSQL the request passes its "is the slug free?" check and blocks on the unique index
     * until the commit; PGlite has one connection, so the request waits for the whole transaction.
     */
    it('answers 400 on slug when a concurrent request takes the slug first', async () => {
      const slug = unique('race-').toLowerCase()
      let pending: Promise<LightMyRequestResponse> | undefined
      await ctx.database.db.transaction(async (tx) => {
        const now = ctx.clock.now()
        await tx.insert(categories).values({ id: newId(), name: 'First taker', slug, createdAt: now, updatedAt: now })
        pending = request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload: { name: 'Second taker', slug } })
        if (ctx.database.kind === 'postgres') await untilAQueryWaitsForALock(ctx.database.db)
      })
      expectError(await pending!, 400, 'VALIDATION_ERROR', ['slug'])
      expect((await ctx.database.db.select().from(categories).where(eq(categories.slug, slug))).map((row) => row.name)).toEqual(['First taker'])
    })

    it('refuses a subcategory as parent: two levels only (400 on parentId)', async () => {
      const top = await createTop()
      const sub = await createSub(top.id)
      const name = unique('Third level ')
      expectError(await request(ctx.app, { method: 'POST', url: '/categories', token: admin, payload: { name, parentId: sub.id } }), 400, 'VALIDATION_ERROR', ['parentId'])
      expect(await ctx.database.db.select().from(categories).where(eq(categories.name, name))).toEqual([])
    })
  })

  describe('PUT /categories/:categoryId', () => {
    it('changes only the fields sent and keeps the slug when the name changes', async () => {
      const top = await createTop({ description: 'Before' })
      const response = await request(ctx.app, { method: 'PUT', url: `/categories/${top.id}`, token: admin, payload: { name: 'Renamed category' } })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ id: top.id, name: 'Renamed category', slug: top.slug, description: 'Before', position: top.position })
      expect(await categoryRow(top.id)).toMatchObject({ name: 'Renamed category', slug: top.slug, description: 'Before' })
    })

    it('updates by slug: slug, description and position', async () => {
      const top = await createTop()
      const slug = unique('moved-').toLowerCase()
      const response = await request(ctx.app, { method: 'PUT', url: `/categories/${top.slug}`, token: admin, payload: { slug, description: 'After', position: 3 } })
      expect(response.statusCode).toBe(200)
      expect(await categoryRow(top.id)).toMatchObject({ slug, description: 'After', position: 3 })
      expect((await getOne(slug)).json().data.id).toBe(top.id)
      expectError(await getOne(top.slug), 404, 'NOT_FOUND')
    })

    it('accepts its own slug unchanged', async () => {
      const top = await createTop()
      const response = await request(ctx.app, { method: 'PUT', url: `/categories/${top.id}`, token: admin, payload: { slug: top.slug } })
      expect(response.statusCode).toBe(200)
    })

    it('moves a childless category under a top-level one, and back to the top', async () => {
      const top = await createTop()
      const other = await createTop()
      let response = await request(ctx.app, { method: 'PUT', url: `/categories/${other.id}`, token: admin, payload: { parentId: top.id } })
      expect(response.statusCode).toBe(200)
      expect(response.json().data.parent).toEqual({ id: top.id, name: top.name, slug: top.slug })
      expect((await categoryRow(other.id))!.parentId).toBe(top.id)
      response = await request(ctx.app, { method: 'PUT', url: `/categories/${other.id}`, token: admin, payload: { parentId: null } })
      expect(response.statusCode).toBe(200)
      expect((await categoryRow(other.id))!.parentId).toBeNull()
    })

    const refusals: [string, (ids: { top: string; sub: string; other: string }) => { target: string; payload: Record<string, unknown> }, string[]][] = [
      ['an empty body', ({ top }) => ({ target: top, payload: {} }), ['body']],
      ['a name of one character', ({ top }) => ({ target: top, payload: { name: 'x' } }), ['name']],
      ['a slug with an underscore', ({ top }) => ({ target: top, payload: { slug: 'bad_slug' } }), ['slug']],
      ['a slug used by another category', ({ top }) => ({ target: top, payload: { slug: 'logo-design' } }), ['slug']],
      ['an unknown parentId', ({ other }) => ({ target: other, payload: { parentId: UNKNOWN_ID } }), ['parentId']],
      ['a subcategory as parent', ({ sub, other }) => ({ target: other, payload: { parentId: sub } }), ['parentId']],
      ['itself as parent', ({ other }) => ({ target: other, payload: { parentId: other } }), ['parentId']],
      ['a category with subcategories becoming a subcategory', ({ top, other }) => ({ target: top, payload: { parentId: other } }), ['parentId']],
      ['a position over 1000', ({ top }) => ({ target: top, payload: { position: 5000 } }), ['position']],
      ['an unknown field', ({ top }) => ({ target: top, payload: { parent: null } }), ['parent']],
    ]

    it.each(refusals)('refuses %s (400 on the field) and changes nothing', async (_label, build, fields) => {
      const top = await createTop()
      const sub = await createSub(top.id)
      const other = await createTop()
      const { target, payload } = build({ top: top.id, sub: sub.id, other: other.id })
      const before = await Promise.all([top.id, sub.id, other.id].map(categoryRow))
      expectError(await request(ctx.app, { method: 'PUT', url: `/categories/${target}`, token: admin, payload }), 400, 'VALIDATION_ERROR', fields)
      expect(await Promise.all([top.id, sub.id, other.id].map(categoryRow))).toEqual(before)
    })

    it('answers 404 for an unknown or malformed category', async () => {
      expectError(await request(ctx.app, { method: 'PUT', url: `/categories/${UNKNOWN_ID}`, token: admin, payload: { name: 'Nobody' } }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'PUT', url: '/categories/not_a_slug', token: admin, payload: { name: 'Nobody' } }), 404, 'NOT_FOUND')
    })
  })

  describe('DELETE /categories/:categoryId', () => {
    it('deletes an unused category (200) by id or slug', async () => {
      const byId = await createTop()
      const bySlug = await createTop()
      for (const [key, id] of [
        [byId.id, byId.id],
        [bySlug.slug, bySlug.id],
      ] as const) {
        const response = await request(ctx.app, { method: 'DELETE', url: `/categories/${key}`, token: admin })
        expect(response.statusCode).toBe(200)
        expect(response.json()).toEqual({ success: true, data: { message: 'Category deleted' } })
        expect(await categoryRow(id)).toBeUndefined()
      }
    })

    it('refuses a category with subcategories (422 CATEGORY_IN_USE), then deletes it once they are gone', async () => {
      const top = await createTop()
      const sub = await createSub(top.id)
      expectError(await request(ctx.app, { method: 'DELETE', url: `/categories/${top.id}`, token: admin }), 422, 'CATEGORY_IN_USE')
      expect(await categoryRow(top.id)).toBeDefined()
      expect((await request(ctx.app, { method: 'DELETE', url: `/categories/${sub.id}`, token: admin })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'DELETE', url: `/categories/${top.id}`, token: admin })).statusCode).toBe(200)
      expect(await categoryRow(top.id)).toBeUndefined()
    })

    it.each([
      ['an active service', 'active', false],
      ['a pending service', 'pending', false],
      ['a paused service', 'paused', false],
      ['a rejected service', 'rejected', false],
      ['a soft-deleted service', 'active', true],
    ] as const)('refuses a category used by %s (422 CATEGORY_IN_USE) and keeps it', async (_label, status, deleted) => {
      const top = await createTop()
      const sub = await createSub(top.id)
      await addService(sub.id, status, deleted)
      expectError(await request(ctx.app, { method: 'DELETE', url: `/categories/${sub.slug}`, token: admin }), 422, 'CATEGORY_IN_USE')
      expect(await categoryRow(sub.id)).toBeDefined()
    })

    it('answers 404 for an unknown or malformed category', async () => {
      expectError(await request(ctx.app, { method: 'DELETE', url: `/categories/${UNKNOWN_ID}`, token: admin }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'DELETE', url: '/categories/no-such-category', token: admin }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'DELETE', url: '/categories/%20', token: admin }), 404, 'NOT_FOUND')
    })
  })
})
