import { asc, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCategory, createListings, type Listings } from '../../../test/factories/services.ts'
import { createUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { newId } from '../../lib/ids.ts'
import { users } from '../users/users.table.ts'
import { services } from './services.table.ts'

interface Count {
  key: string
  count: number
}
interface FacetsJson {
  categories: (Count & { parent: string | null })[]
  priceBands: (Count & { from: number; to: number | null })[]
  deliveryBands: (Count & { from: number; to: number | null })[]
  sellerLevels: Count[]
  countsAreExact: boolean
}
interface PageJson {
  items: { id: string }[]
  pagination: { total: number; totalIsExact: boolean }
  facets?: FacetsJson
}

const counts = (facet: Count[]) => Object.fromEntries(facet.map((entry) => [entry.key, entry.count]))
const nonZero = (facet: Count[]) => Object.fromEntries(facet.filter((entry) => entry.count > 0).map((entry) => [entry.key, entry.count]))

describe('facets (GET /services?facets=true)', () => {
  let ctx: TestContext
  let data: Listings

  beforeAll(async () => {
    ctx = await createTestApp()
    data = await createListings(ctx)
  })
  afterAll(() => ctx.close())

  const page = async (query: string, path = '/services'): Promise<PageJson> => {
    const response = await request(ctx.app, { method: 'GET', url: `${path}?${query}` })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data
  }
  const facetsOf = async (query: string, path?: string) => (await page(`${query}${query ? '&' : ''}facets=true`, path)).facets!
  const total = async (query: string) => (await page(query)).pagination.total

  it('counts the list per category (top level and subcategory), price band, delivery band and seller level', async () => {
    const facets = await facetsOf('')
    expect(facets.categories).toEqual([
      { key: data.parent.slug, parent: null, count: 3 },
      { key: data.child.slug, parent: data.parent.slug, count: 2 },
      { key: data.other.slug, parent: null, count: 2 },
    ])
    expect(facets.priceBands).toEqual([
      { key: '0-25', from: 0, to: 24.99, count: 1 },
      { key: '25-50', from: 25, to: 49.99, count: 1 },
      { key: '50-100', from: 50, to: 99.99, count: 1 },
      { key: '100-250', from: 100, to: 249.99, count: 1 },
      { key: '250-500', from: 250, to: 499.99, count: 1 },
      { key: '500+', from: 500, to: null, count: 0 },
    ])
    expect(facets.deliveryBands).toEqual([
      { key: '1', from: 1, to: 1, count: 1 },
      { key: '2-3', from: 2, to: 3, count: 1 },
      { key: '4-7', from: 4, to: 7, count: 2 },
      { key: '8+', from: 8, to: null, count: 1 },
    ])
    expect(facets.sellerLevels).toEqual([
      { key: 'new', count: 1 },
      { key: 'level_one', count: 2 },
      { key: 'level_two', count: 0 },
      { key: 'top_rated', count: 2 },
    ])
    expect(facets.countsAreExact).toBe(true)
  })

  it('gives each key the count its filter then returns', async () => {
    const facets = await facetsOf('minRating=0')
    for (const band of facets.priceBands) expect(await total(`minPrice=${band.from}${band.to === null ? '' : `&maxPrice=${band.to}`}`), band.key).toBe(band.count)
    for (const level of facets.sellerLevels) expect(await total(`sellerLevel=${level.key}`), level.key).toBe(level.count)
    for (const category of facets.categories) expect(await total(`category=${category.key}`), category.key).toBe(category.count)
    // The delivery filter is "at most N days": a band is the difference of two of them.
    let below = 0
    for (const band of facets.deliveryBands) {
      const upTo = band.to === null ? await total('minRating=0') : await total(`deliveryDays=${band.to}`)
      expect(upTo - below, band.key).toBe(band.count)
      below = upTo
    }
  })

  it('counts each facet without its own filter, and with every other', async () => {
    const unfiltered = await facetsOf('')
    const byDelivery = await facetsOf('deliveryDays=3')
    expect(byDelivery.deliveryBands).toEqual(unfiltered.deliveryBands)
    expect(nonZero(byDelivery.priceBands)).toEqual({ '0-25': 1, '50-100': 1 })
    expect(nonZero(byDelivery.sellerLevels)).toEqual({ top_rated: 2 })
    expect(counts(byDelivery.categories)).toEqual({ [data.parent.slug]: 2, [data.child.slug]: 1 })

    const byLevel = await facetsOf('sellerLevel=top_rated')
    expect(byLevel.sellerLevels).toEqual(unfiltered.sellerLevels)
    expect(nonZero(byLevel.deliveryBands)).toEqual({ '1': 1, '2-3': 1 })

    const byPrice = await facetsOf('minPrice=25&maxPrice=49.99')
    expect(byPrice.priceBands).toEqual(unfiltered.priceBands)
    expect(nonZero(byPrice.sellerLevels)).toEqual({ new: 1 })
    expect(nonZero(byPrice.deliveryBands)).toEqual({ '4-7': 1 })

    const byCategory = await facetsOf(`category=${data.child.slug}`)
    expect(byCategory.categories).toEqual(unfiltered.categories)
    expect(nonZero(byCategory.priceBands)).toEqual({ '0-25': 1, '250-500': 1 })
    expect(nonZero(byCategory.sellerLevels)).toEqual({ top_rated: 1, level_one: 1 })

    const both = await facetsOf(`category=${data.other.slug}&sellerLevel=new`)
    expect(counts(both.categories)).toEqual({ [data.other.slug]: 1 })
    expect(nonZero(both.sellerLevels)).toEqual({ new: 1, level_one: 1 })
    expect(nonZero(both.priceBands)).toEqual({ '25-50': 1 })
  })

  it('counts the matches of a search, with or without filters, and of a category page', async () => {
    const search = await facetsOf('search=logo')
    expect(counts(search.categories)).toEqual({ [data.parent.slug]: 2, [data.child.slug]: 2 })
    expect(nonZero(search.sellerLevels)).toEqual({ top_rated: 1, level_one: 1 })
    // In a category, the category facet still counts the whole catalogue's matches.
    const inOther = await facetsOf(`search=logo&category=${data.other.slug}`)
    expect(counts(inOther.categories)).toEqual(counts(search.categories))
    expect(nonZero(inOther.sellerLevels)).toEqual({})
    expect(nonZero(inOther.priceBands)).toEqual({})
    const inChild = await facetsOf(`search=logo&category=${data.child.slug}`)
    expect(counts(inChild.categories)).toEqual(counts(search.categories))
    expect(nonZero(inChild.priceBands)).toEqual({ '0-25': 1, '250-500': 1 })
    expect(nonZero(inChild.deliveryBands)).toEqual({ '1': 1, '8+': 1 })
    const narrowed = await facetsOf('search=logo&deliveryDays=1')
    expect(nonZero(narrowed.deliveryBands)).toEqual({ '1': 1, '8+': 1 })
    expect(nonZero(narrowed.priceBands)).toEqual({ '0-25': 1 })
    const sorted = await facetsOf('search=logo&sortBy=price&tags=logo')
    expect(nonZero(sorted.priceBands)).toEqual({ '0-25': 1, '250-500': 1 })
    const categoryPage = await facetsOf('minRating=4', `/categories/${data.parent.id}/services`)
    expect(counts(categoryPage.categories)).toEqual({ [data.parent.slug]: 2, [data.child.slug]: 1, [data.other.slug]: 1 })
    expect(nonZero(categoryPage.sellerLevels)).toEqual({ top_rated: 2 })
    expect(await facetsOf('sellerOnline=true')).toMatchObject({ categories: [], countsAreExact: true })
  })

  it('gives the same facets on every page, and none unless asked', async () => {
    const first = await page('limit=2&facets=true&minRating=0')
    const second = await page('limit=2&page=2&facets=true&minRating=0')
    expect(second.facets).toEqual(first.facets)
    expect(await page('minRating=0')).not.toHaveProperty('facets')
    expect(await page('facets=false')).not.toHaveProperty('facets')
    expect(await page('')).not.toHaveProperty('facets')
  })

  it('answers an unknown category of GET /services with no services and the facets of the rest', async () => {
    const answer = await page('category=no-such-category&facets=true')
    expect(answer.items).toEqual([])
    expect(answer.pagination.total).toBe(0)
    expect(answer.facets!.categories).toHaveLength(3)
    expect(answer.facets!.priceBands.every((band) => band.count === 0)).toBe(true)
    expectError(await request(ctx.app, { method: 'GET', url: '/categories/no-such-category/services?facets=true' }), 404, 'NOT_FOUND')
  })
})

describe('facets over more than 1,000 matches', () => {
  let ctx: TestContext
  let category: string
  let sellerId: string
  const FEW = 5

  beforeAll(async () => {
    ctx = await createTestApp()
    category = await createCategory(ctx, 'Many')
    const seller = await createUser(ctx)
    sellerId = seller.user.id
    const now = ctx.clock.now()
    // More matches than the cap, written in one statement (the API would take minutes): all but a
    // few deliver in two days, and cost 10.00.
    const rows = Array.from({ length: 1000 + FEW }, (_, index) => ({
      id: newId(),
      sellerId: seller.user.id,
      categoryId: category,
      title: `Many service ${index}`,
      description: 'Written in one statement to pass the cap of counted matches.',
      status: 'active' as const,
      startingPriceCents: 1000,
      startingDeliveryDays: index < FEW ? 1 : 2,
      createdAt: new Date(now.getTime() - index * 1000),
      updatedAt: now,
    }))
    await ctx.database.db.insert(services).values(rows)
  })
  afterAll(() => ctx.close())

  const page = async (query: string): Promise<PageJson> => {
    const response = await request(ctx.app, { method: 'GET', url: `/categories/${category}/services?${query}` })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data
  }

  it('counts the first 1,000 matches and says so (countsAreExact false), as total does', async () => {
    const capped = await page('facets=true&minRating=0')
    expect(capped.pagination).toMatchObject({ total: 1000, totalIsExact: false })
    expect(capped.facets!.countsAreExact).toBe(false)
    expect(capped.facets!.priceBands.reduce((sum, band) => sum + band.count, 0)).toBe(1000)
    expect(capped.facets!.sellerLevels.reduce((sum, level) => sum + level.count, 0)).toBe(1000)
  })

  it('counts a category from the kept counts, exactly, when nothing else narrows the list', async () => {
    const plain = await page('facets=true')
    expect(plain.pagination).toMatchObject({ total: 1000 + FEW, totalIsExact: true })
    expect(plain.facets!.categories).toContainEqual({ key: expect.any(String), parent: null, count: 1000 + FEW })
    expect(plain.facets!.countsAreExact).toBe(false)
  })

  it('counts a few matches exactly while their facet, without its filter, is cut', async () => {
    const few = await page('facets=true&deliveryDays=1')
    expect(few.pagination).toMatchObject({ total: FEW, totalIsExact: true })
    expect(counts(few.facets!.sellerLevels)).toMatchObject({ new: FEW })
    expect(few.facets!.deliveryBands.reduce((sum, band) => sum + band.count, 0)).toBe(1000)
    expect(few.facets!.countsAreExact).toBe(false)
  })

  // Without facets, a delivery filter reads the services that deliver in time first when they
  // are few, and walks the sort's index when they are many: the same answers either way.
  it('lists the few that deliver in time, newest first, page after page, exactly counted', async () => {
    const titles = (answer: PageJson) => answer.items.map((item) => (item as { title?: string }).title)
    for (const path of [`/categories/${category}/services`, '/services']) {
      const all = (await request(ctx.app, { method: 'GET', url: `${path}?deliveryDays=1` })).json().data as PageJson & { pagination: { hasNext: boolean } }
      expect(all.pagination).toMatchObject({ total: FEW, totalIsExact: true, hasNext: false })
      expect(titles(all)).toEqual(Array.from({ length: FEW }, (_, index) => `Many service ${index}`))
      const seen: unknown[] = []
      let cursor: string | null = null
      do {
        const url: string = `${path}?deliveryDays=1&limit=2${cursor ? `&cursor=${cursor}` : ''}`
        const next = (await request(ctx.app, { method: 'GET', url })).json().data as PageJson & { pagination: { nextCursor: string | null } }
        seen.push(...titles(next))
        cursor = next.pagination.nextCursor
      } while (cursor !== null)
      expect(seen).toEqual(titles(all))
    }
  })

  // Levels that include `new` keep that way of reading, in statements of their own (with the
  // level check, which the others leave out).
  it('lists the few that deliver in time at the levels asked for, `new` among them', async () => {
    const titles = async (query: string) => {
      const answer = (await request(ctx.app, { method: 'GET', url: `/services?${query}` })).json().data as PageJson
      return { total: answer.pagination.total, titles: answer.items.map((item) => (item as { title?: string }).title) }
    }
    const few = Array.from({ length: FEW }, (_, index) => `Many service ${index}`)
    expect(await titles('deliveryDays=1&sellerLevel=new')).toEqual({ total: FEW, titles: few })
    expect(await titles('deliveryDays=1&sellerLevel=new,top_rated')).toEqual({ total: FEW, titles: few })
    await ctx.database.db.update(users).set({ sellerLevel: 'level_one' }).where(eq(users.id, sellerId))
    try {
      expect(await titles('deliveryDays=1&sellerLevel=new,top_rated')).toEqual({ total: 0, titles: [] })
      expect(await titles('deliveryDays=1&sellerLevel=new,level_one')).toEqual({ total: FEW, titles: few })
      expect((await titles('deliveryDays=2&sellerLevel=new,level_one')).total).toBe(1000)
    } finally {
      await ctx.database.db.update(users).set({ sellerLevel: 'new' }).where(eq(users.id, sellerId))
    }
  })

  it('walks the sort’s index when more than the cap deliver in time, the total capped', async () => {
    for (const path of [`/categories/${category}/services`, '/services']) {
      const many = (await request(ctx.app, { method: 'GET', url: `${path}?deliveryDays=2&sortBy=createdAt&sortOrder=desc` })).json().data as PageJson
      expect(many.pagination).toMatchObject({ total: 1000, totalIsExact: false })
      expect(many.items.map((item) => (item as { title?: string }).title)).toEqual(Array.from({ length: 20 }, (_, index) => `Many service ${index}`))
      // Every price is the same: the cheapest first are the lowest ids.
      const cheapest = (await request(ctx.app, { method: 'GET', url: `${path}?deliveryDays=2&sortBy=price&sortOrder=asc&limit=5` })).json().data as PageJson
      const lowest = await ctx.database.db.select({ id: services.id }).from(services).orderBy(asc(services.id)).limit(5)
      expect(cheapest.items.map((item) => item.id)).toEqual(lowest.map((row) => row.id))
    }
  })
})
