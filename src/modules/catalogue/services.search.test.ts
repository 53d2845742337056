import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createUser, unique } from '../../../test/factories/users.ts'
import { newId } from '../../lib/ids.ts'
import { categories } from './categories.table.ts'
import { services } from './services.table.ts'

interface SummaryJson {
  id: string
  title: string
  startingPrice: number
  seller: { id: string }
  category: { id: string; slug: string }
}

describe('services list and search (GET /services, GET /categories/:categoryId/services)', () => {
  let ctx: TestContext
  let parent: { id: string; slug: string }
  let child: { id: string; slug: string }
  let other: { id: string; slug: string }
  let sellerA: string
  let sellerB: { token: string; id: string }
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    ctx = await createTestApp()
    const now = ctx.clock.now()
    parent = { id: newId(), slug: unique('design-') }
    child = { id: newId(), slug: unique('logos-') }
    other = { id: newId(), slug: unique('print-') }
    await ctx.database.db.insert(categories).values([
      { id: parent.id, name: 'Design', slug: parent.slug, createdAt: now, updatedAt: now },
      { id: child.id, parentId: parent.id, name: 'Logos', slug: child.slug, createdAt: now, updatedAt: now },
      { id: other.id, name: 'Print', slug: other.slug, createdAt: now, updatedAt: now },
    ])
    sellerA = (await createUser(ctx)).accessToken
    const b = await createUser(ctx)
    sellerB = { token: b.accessToken, id: b.user.id }
    const moderator = (await createUser(ctx, { permissions: ['view_services', 'approve_services'] })).accessToken

    const publish = async (key: string, token: string, fields: { title: string; description: string; categoryId: string; price: number; tags?: string[] }, approve = true) => {
      ctx.clock.advance(1000)
      const response = await request(ctx.app, {
        method: 'POST',
        url: '/services',
        token,
        payload: {
          title: fields.title,
          description: fields.description,
          categoryId: fields.categoryId,
          tags: fields.tags ?? [],
          packages: [{ name: 'Basic', price: fields.price, deliveryDays: 3, revisions: 1 }],
        },
      })
      expect(response.statusCode, response.body).toBe(201)
      ids[key] = response.json().data.id
      if (approve) expect((await request(ctx.app, { method: 'POST', url: `/admin/services/${ids[key]}/approve`, token: moderator })).statusCode).toBe(200)
    }

    await publish('logo', sellerA, { title: 'Logo design for startups', description: 'Memorable brand marks drawn by hand for young companies.', categoryId: child.id, price: 50, tags: ['logo', 'branding'] })
    await publish('website', sellerA, { title: 'Website development', description: 'Fast websites; I can also place your logo in the header.', categoryId: parent.id, price: 300, tags: ['web'] })
    await publish('cards', sellerB.token, { title: 'Business card printing', description: 'Premium business cards printed and shipped to you.', categoryId: other.id, price: 5, tags: ['print', 'cards'] })
    await publish('pending', sellerB.token, { title: 'Logo animation for videos', description: 'Your logo animated for intros and outros of videos.', categoryId: child.id, price: 80 }, false)
    await publish('deleted', sellerB.token, { title: 'Logo design deluxe package', description: 'A deleted logo design service nobody should find.', categoryId: child.id, price: 90 })
    await request(ctx.app, { method: 'DELETE', url: `/services/${ids.deleted}`, token: sellerB.token })
    await ctx.database.db.update(services).set({ ratingAverage: 4.9, ratingCount: 12 }).where(eq(services.id, ids.cards!))
    await ctx.database.db.update(services).set({ ratingAverage: 3.5, ratingCount: 2 }).where(eq(services.id, ids.logo!))
  })
  afterAll(() => ctx.close())

  const list = async (query: string, url = '/services') => {
    const response = await request(ctx.app, { method: 'GET', url: `${url}?${query}` })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data as { items: SummaryJson[]; pagination: { total: number; page: number; hasNext: boolean } }
  }
  const titlesOf = async (query: string, url?: string) => (await list(query, url)).items.map((item) => item.id)

  it('lists only active, not deleted services, newest first, with compact summaries', async () => {
    const page = await list('')
    expect(page.items.map((item) => item.id)).toEqual([ids.cards, ids.website, ids.logo])
    expect(page.pagination).toMatchObject({ total: 3, page: 1, hasNext: false })
    expect(Object.keys(page.items[0]!).sort()).toEqual(['banner', 'category', 'createdAt', 'id', 'ordersCount', 'rating', 'seller', 'sellerLevel', 'shortDescription', 'startingPrice', 'title'])
    expect(page.items[0]).toMatchObject({ startingPrice: 5, rating: { average: 4.9, count: 12 }, seller: { id: sellerB.id }, category: { id: other.id, slug: other.slug } })
  })

  it('pages through results', async () => {
    const first = await list('limit=2&page=1')
    const second = await list('limit=2&page=2')
    expect(first.pagination).toMatchObject({ total: 3, hasNext: true })
    expect([...first.items, ...second.items].map((item) => item.id).sort()).toEqual([ids.cards, ids.website, ids.logo].sort())
  })

  it('filters by category, including its subcategories, by id or slug', async () => {
    expect((await titlesOf(`category=${parent.id}`)).sort()).toEqual([ids.logo, ids.website].sort())
    expect(await titlesOf(`category=${child.slug}`)).toEqual([ids.logo])
    expect(await titlesOf('category=no-such-category')).toEqual([])
    expect((await titlesOf('', `/categories/${parent.slug}/services`)).sort()).toEqual([ids.logo, ids.website].sort())
    expect(await titlesOf('sortBy=price', `/categories/${other.id}/services`)).toEqual([ids.cards])
  })

  it('answers 404 for the services of an unknown category', async () => {
    expectError(await request(ctx.app, { method: 'GET', url: '/categories/no-such-category/services' }), 404, 'NOT_FOUND')
  })

  it('filters by starting price, seller and tags', async () => {
    expect(await titlesOf('minPrice=10&maxPrice=100')).toEqual([ids.logo])
    expect(await titlesOf('maxPrice=5')).toEqual([ids.cards])
    expect(await titlesOf(`sellerId=${sellerB.id}`)).toEqual([ids.cards])
    expect((await titlesOf('tags=branding,cards')).sort()).toEqual([ids.logo, ids.cards].sort())
  })

  it('sorts by price (ascending by default), rating and date', async () => {
    expect(await titlesOf('sortBy=price')).toEqual([ids.cards, ids.logo, ids.website])
    expect(await titlesOf('sortBy=price&sortOrder=desc')).toEqual([ids.website, ids.logo, ids.cards])
    expect((await titlesOf('sortBy=rating'))[0]).toBe(ids.cards)
    expect(await titlesOf('sortBy=createdAt&sortOrder=asc')).toEqual([ids.logo, ids.website, ids.cards])
  })

  it('ranks a title match above a description-only match', async () => {
    expect(await titlesOf('search=logo')).toEqual([ids.logo, ids.website])
  })

  it('ranks a search with a category, price, seller or tag filter the same way, within the filter', async () => {
    expect(await titlesOf(`search=logo&category=${parent.slug}`)).toEqual([ids.logo, ids.website])
    expect(await titlesOf(`search=logo&category=${child.id}`)).toEqual([ids.logo])
    expect(await titlesOf('search=logo&minPrice=100')).toEqual([ids.website])
    expect(await titlesOf('search=logo&tags=logo')).toEqual([ids.logo])
    expect(await titlesOf(`search=logo&sellerId=${sellerB.id}`)).toEqual([])
    expect(await titlesOf('search=logo&sortBy=relevance&maxPrice=400')).toEqual([ids.logo, ids.website])
    expect((await list('search=logo%20desgin&minPrice=10')).items.map((item) => item.id)[0]).toBe(ids.logo)
    expect(await titlesOf(`search=logo&category=${other.slug}`)).toEqual([])
  })

  it('forgives typos ("logo desgin" finds the logo design service)', async () => {
    expect((await titlesOf('search=logo%20desgin'))[0]).toBe(ids.logo)
    expect(await titlesOf('search=bussiness%20cards')).toEqual([ids.cards])
    expect(await titlesOf('search=webiste%20developmnt')).toEqual([ids.website])
  })

  /** How many statements the app sends the database while `run` runs (the test database's one client). */
  const statementsDuring = async (run: () => Promise<unknown>) => {
    const database = ctx.database
    const target = (database.kind === 'pglite' ? database.client : database.pool) as unknown as { query: (...args: unknown[]) => unknown }
    const spy = vi.spyOn(target, 'query')
    try {
      await run()
      return spy.mock.calls.length
    } finally {
      spy.mockRestore()
    }
  }

  it('corrects a rare search in the same statement: one round trip whatever it finds', async () => {
    for (const search of ['logo%20desgin', 'bussiness%20cards', 'zzqqxx', 'logo', `logo%20desgin&category=${parent.slug}`, 'webiste&sortBy=price', 'logo%20desgin&facets=true']) {
      let items: string[] = []
      expect(
        await statementsDuring(async () => {
          items = await titlesOf(`search=${search}`)
        }),
        search,
      ).toBe(1)
      if (search.startsWith('logo%20desgin')) expect(items[0], search).toBe(ids.logo)
      if (search.startsWith('webiste')) expect(items, search).toEqual([ids.website])
    }
  })

  it('corrects each misspelt word to its nearest lexicon words in one database function', async () => {
    const corrected = async (search: string) => {
      const result: unknown = await ctx.database.db.execute(sql`select catalogue_search_correction(${search})::text as query`)
      return (result as { rows: { query: string | null }[] }).rows[0]!.query
    }
    expect(await corrected('logo desgin')).toBe("'logo' & 'design'")
    expect(await corrected('Bussiness')).toContain("'busi'")
    // Words of fewer than three letters, and words near nothing, drop out; nothing near is null.
    expect(await corrected('a logo')).not.toContain('&')
    expect(await corrected('zzqqxx')).toBeNull()
    expect(await corrected('!!')).toBeNull()
  })

  it('answers 200 to tsquery and SQL syntax in the search', async () => {
    for (const search of ['a & | !', "'; drop table services; --", '!!(', ':*', '"unclosed']) {
      const response = await request(ctx.app, { method: 'GET', url: `/services?search=${encodeURIComponent(search)}` })
      expect(response.statusCode, search).toBe(200)
    }
    expect(await titlesOf('sortBy=createdAt')).toHaveLength(3)
  })

  const invalid: [string, string, string[]][] = [
    ['sortBy=password', 'sortBy=password', ['sortBy']],
    ['limit=100000', 'limit=100000', ['limit']],
    ['page=-1', 'page=-1', ['page']],
    ['relevance without search', 'sortBy=relevance', ['sortBy']],
    ['minPrice above maxPrice', 'minPrice=50&maxPrice=10', ['minPrice']],
    ['a negative minPrice', 'minPrice=-1', ['minPrice']],
    ['a non-numeric maxPrice', 'maxPrice=cheap', ['maxPrice']],
    ['a malformed sellerId', 'sellerId=42', ['sellerId']],
    ['a 101-character search', `search=${'a'.repeat(101)}`, ['search']],
  ]
  it.each(invalid)('refuses %s (400 VALIDATION_ERROR)', async (_label, query, fields) => {
    expectError(await request(ctx.app, { method: 'GET', url: `/services?${query}` }), 400, 'VALIDATION_ERROR', fields)
  })
})
