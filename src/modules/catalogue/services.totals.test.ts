import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { listen, openSocket } from '../../../test/setup/sockets.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { createCategory, publishService, serviceBody } from '../../../test/factories/services.ts'
import { createUser, unique } from '../../../test/factories/users.ts'
import { newId } from '../../lib/ids.ts'
import { COUNT_CAP } from './service-list-pages.ts'
import { categories, categoryServiceCounts } from './categories.table.ts'
import { CATEGORY_TREE_TTL_MS } from './category-tree.cache.ts'
import { ONLINE_SELLERS_TTL_MS } from './seller-presence.service.ts'
import { users } from '../users/users.table.ts'
import { services } from './services.table.ts'

interface Pagination {
  page: number
  total: number
  pages: number
  hasNext: boolean
  hasPrev: boolean
  totalIsExact: boolean
  nextCursor: string | null
}
interface ListJson {
  items: { id: string; title: string }[]
  pagination: Pagination
}

describe('catalogue totals, cursors and misspellings', () => {
  let ctx: TestContext
  let seller: { token: string; id: string }
  let moderator: string

  beforeAll(async () => {
    ctx = await createTestApp()
    const user = await createUser(ctx)
    seller = { token: user.accessToken, id: user.user.id }
    moderator = (await createUser(ctx, { permissions: ['view_services', 'approve_services'] })).accessToken
  })
  afterAll(() => ctx.close())

  const get = async (url: string) => {
    const response = await request(ctx.app, { method: 'GET', url })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data
  }
  const list = async (url: string) => (await get(url)) as ListJson
  const approve = async (id: string) => expect((await request(ctx.app, { method: 'POST', url: `/admin/services/${id}/approve`, token: moderator })).statusCode).toBe(200)
  const publishActive = async (categoryId: string, overrides: Record<string, unknown> = {}) => {
    ctx.clock.advance(1000)
    const id = await publishService(ctx, seller.token, categoryId, overrides)
    await approve(id)
    return id
  }

  describe('servicesCount kept by the writes', () => {
    let parent: string
    let child: string
    let other: string

    beforeAll(async () => {
      parent = await createCategory(ctx, 'Design')
      const now = ctx.clock.now()
      child = newId()
      await ctx.database.db.insert(categories).values({ id: child, parentId: parent, name: 'Logos', slug: unique('logos-'), createdAt: now, updatedAt: now })
      other = await createCategory(ctx, 'Print')
    })

    const countsOf = async () => {
      const tree = (await get('/categories')) as { id: string; servicesCount: number; subcategories: { id: string; servicesCount: number }[] }[]
      const top = tree.find((item) => item.id === parent)!
      return { parent: top.servicesCount, child: top.subcategories.find((item) => item.id === child)!.servicesCount, other: tree.find((item) => item.id === other)!.servicesCount }
    }
    const storedCount = async (categoryId: string) =>
      (await ctx.database.db.select().from(categoryServiceCounts).where(eq(categoryServiceCounts.categoryId, categoryId)))[0]?.activeServices ?? 0

    it('stays right through create, approve, pause, resume, edit, move and delete', async () => {
      expect(await countsOf()).toEqual({ parent: 0, child: 0, other: 0 })

      const id = await publishService(ctx, seller.token, child)
      expect(await countsOf(), 'a pending service is not counted').toEqual({ parent: 0, child: 0, other: 0 })
      await approve(id)
      expect(await countsOf()).toEqual({ parent: 1, child: 1, other: 0 })
      const second = await publishActive(parent)
      expect(await countsOf()).toEqual({ parent: 2, child: 1, other: 0 })

      expect((await request(ctx.app, { method: 'POST', url: `/services/${id}/pause`, token: seller.token })).statusCode).toBe(200)
      expect(await countsOf()).toEqual({ parent: 1, child: 0, other: 0 })
      expect((await request(ctx.app, { method: 'POST', url: `/services/${id}/resume`, token: seller.token })).statusCode).toBe(200)
      expect(await countsOf()).toEqual({ parent: 2, child: 1, other: 0 })

      // An edit resubmits the service for review (pending), here into another category.
      const edited = await request(ctx.app, { method: 'PUT', url: `/services/${id}`, token: seller.token, payload: serviceBody(other) })
      expect(edited.statusCode, edited.body).toBe(200)
      expect(await countsOf()).toEqual({ parent: 1, child: 0, other: 0 })
      await approve(id)
      expect(await countsOf()).toEqual({ parent: 1, child: 0, other: 1 })

      expect((await request(ctx.app, { method: 'DELETE', url: `/services/${second}`, token: seller.token })).statusCode).toBe(200)
      expect(await countsOf()).toEqual({ parent: 0, child: 0, other: 1 })
      const detail = (await get(`/categories/${other}`)) as { servicesCount: number }
      expect(detail.servicesCount).toBe(1)
      expect(await storedCount(other)).toBe(1)
    })

    it('matches a count of the services table after writes of many rows in one statement', async () => {
      const now = ctx.clock.now()
      const rows = Array.from({ length: 5 }, (_, index) => ({
        id: newId(),
        sellerId: seller.id,
        categoryId: index % 2 === 0 ? child : other,
        title: `Bulk service ${index}`,
        description: 'Written in one statement to check the statement-level triggers.',
        status: 'active' as const,
        startingPriceCents: 1000,
        createdAt: now,
        updatedAt: now,
      }))
      await ctx.database.db.insert(services).values(rows)
      await ctx.database.db.update(services).set({ status: 'paused' }).where(eq(services.id, rows[0]!.id))
      await ctx.database.db.delete(services).where(eq(services.id, rows[1]!.id))
      for (const categoryId of [child, other]) {
        const result: unknown = await ctx.database.db.execute(
          sql`select count(*)::int as total from services where category_id = ${categoryId} and status = 'active' and deleted_at is null`,
        )
        expect(await storedCount(categoryId)).toBe((result as { rows: { total: number }[] }).rows[0]!.total)
      }
    })

    it('gives list totals from the kept counts, exact (totalIsExact true)', async () => {
      const page = await list(`/categories/${parent}/services?limit=1`)
      // The rows above were written around the API: the kept tree shows them once it is due for a reload.
      ctx.clock.advance(CATEGORY_TREE_TTL_MS)
      const counted = await countsOf()
      expect(page.pagination).toMatchObject({ total: counted.parent, totalIsExact: true, page: 1, hasPrev: false })
    })
  })

  describe('capped totals', () => {
    let category: string
    beforeAll(async () => {
      category = await createCategory(ctx, 'Many')
      // More matches than the cap, written in one statement (the API would take minutes).
      const now = ctx.clock.now()
      await ctx.database.db.execute(sql`
        insert into services (id, seller_id, category_id, title, description, tags, status, starting_price_cents, created_at, updated_at)
        select gen_random_uuid(), ${seller.id}, ${category}, 'Capped count service ' || g, 'One of many services for the capped count.',
               array['capped'], 'active', 77700, ${now.toISOString()}::timestamptz - g * interval '1 second', ${now.toISOString()}::timestamptz
        from generate_series(1, ${COUNT_CAP + 5}) as g`)
    })

    it('reports a price-filtered total above the cap as the cap with totalIsExact false', async () => {
      const page = await list('/services?minPrice=777&maxPrice=777&limit=5')
      expect(page.pagination).toMatchObject({ total: COUNT_CAP, totalIsExact: false, hasNext: true, pages: COUNT_CAP / 5 })
      expect(page.items).toHaveLength(5)
    })

    it('reports a search total above the cap the same way', async () => {
      const page = await list('/services?search=capped%20count&limit=5')
      expect(page.pagination).toMatchObject({ total: COUNT_CAP, totalIsExact: false, hasNext: true })
    })

    it('reports an exact total under the cap (totalIsExact true)', async () => {
      const page = await list(`/services?sellerId=${seller.id}&minPrice=0&maxPrice=100&limit=1`)
      expect(page.pagination.totalIsExact).toBe(true)
      expect(page.pagination.total).toBeLessThan(COUNT_CAP)
    })

    it('reports a tags total above the cap as the cap, and pages them newest first from the sort', async () => {
      const page = await list('/services?tags=capped&limit=5')
      expect(page.pagination).toMatchObject({ total: COUNT_CAP, totalIsExact: false, hasNext: true })
      const newest = await list(`/categories/${category}/services?limit=5&sortBy=createdAt`)
      expect(page.items.map((item) => item.id)).toEqual(newest.items.map((item) => item.id))
      const inCategory = await list(`/categories/${category}/services?tags=capped&limit=5&sortBy=price&sortOrder=desc`)
      expect(inCategory.pagination).toMatchObject({ total: COUNT_CAP, totalIsExact: false, hasNext: true })
      expect(inCategory.items.map((item) => item.id)).toEqual((await list(`/categories/${category}/services?limit=5&sortBy=price&sortOrder=desc`)).items.map((item) => item.id))
    })

    it('walks a tag carried past the cap with cursors: no service twice, none missed, in price order', async () => {
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page: ListJson = await list(`/services?tags=capped&limit=100&sortBy=price${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...page.items.map((item) => item.id))
        cursor = page.pagination.nextCursor
      } while (cursor)
      expect(new Set(seen).size).toBe(COUNT_CAP + 5)
      const byOffset = await list(`/services?tags=capped&limit=100&page=3&sortBy=price`)
      expect(byOffset.items.map((item) => item.id)).toEqual(seen.slice(200, 300))
    })

    /** Every page of a list by price, 100 at a time, by cursor: the ids in the order shown. */
    const walkByPrice = async (query: string) => {
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page: ListJson = await list(`/services?${query}&limit=100&sortBy=price${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...page.items.map((item) => item.id))
        cursor = page.pagination.nextCursor
      } while (cursor)
      return seen
    }

    /** A list narrowed to the seller (`query`) past the cap: the total is the cap, its pages are the seller's own list's, each service once. */
    const expectTheSellersOwnList = async (query: string) => {
      const first = await list(`/services?${query}&limit=5`)
      expect(first.pagination).toMatchObject({ total: COUNT_CAP, totalIsExact: false, hasNext: true })
      expect(first.items.map((item) => item.id)).toEqual((await list(`/services?sellerId=${seller.id}&limit=5`)).items.map((item) => item.id))
      const walked = await walkByPrice(query)
      expect(new Set(walked).size).toBe(walked.length)
      expect(walked).toEqual(await walkByPrice(`sellerId=${seller.id}`))
    }

    it('reports the services of sellers online past the cap as the cap, and walks them by cursor as the seller\'s own list', async () => {
      const socket = await openSocket(await listen(ctx.app), { header: seller.token })
      try {
        await vi.waitFor(async () => expect(await ctx.app.container.realtime.isOnline(seller.id)).toBe(true))
        ctx.clock.advance(ONLINE_SELLERS_TTL_MS)
        await expectTheSellersOwnList('sellerOnline=true')
        // Past the cap in the category too; exact once another filter leaves none of them.
        expect((await list(`/categories/${category}/services?sellerOnline=true&limit=5`)).pagination).toMatchObject({ total: COUNT_CAP, totalIsExact: false })
        expect(await list('/services?sellerOnline=true&minRating=4&limit=5')).toMatchObject({ items: [], pagination: { total: 0, totalIsExact: true, hasNext: false } })
      } finally {
        socket.close()
      }
    })

    it('reports the services of sellers at a level past the cap as the cap, and walks them by cursor as the seller\'s own list', async () => {
      await ctx.database.db.update(users).set({ sellerLevel: 'top_rated' }).where(eq(users.id, seller.id))
      try {
        await expectTheSellersOwnList('sellerLevel=top_rated')
        expect(await list('/services?sellerLevel=level_two&limit=5')).toMatchObject({ items: [], pagination: { total: 0, totalIsExact: true } })
      } finally {
        await ctx.database.db.update(users).set({ sellerLevel: 'new' }).where(eq(users.id, seller.id))
      }
    })

    it('counts the category exactly past the cap (kept counts)', async () => {
      const page = await list(`/categories/${category}/services?limit=5`)
      expect(page.pagination).toMatchObject({ total: COUNT_CAP + 5, totalIsExact: true })
    })

    it('walks a whole category with cursors: no service twice, none missed, same order as pages', async () => {
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const page: ListJson = await list(`/categories/${category}/services?limit=100&sortBy=createdAt${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...page.items.map((item) => item.id))
        expect(page.pagination.hasPrev).toBe(pages > 0)
        cursor = page.pagination.nextCursor
        pages++
      } while (cursor)
      expect(pages).toBe(11)
      expect(new Set(seen).size).toBe(COUNT_CAP + 5)
      const byOffset = await list(`/categories/${category}/services?limit=100&page=3&sortBy=createdAt`)
      expect(byOffset.items.map((item) => item.id)).toEqual(seen.slice(200, 300))
    })
  })

  describe('cursors', () => {
    let category: string
    const ids: string[] = []
    beforeAll(async () => {
      category = await createCategory(ctx, 'Cursor')
      for (const [index, price] of [30, 10, 20, 10, 40].entries()) {
        ids.push(await publishActive(category, { title: `Cursor walk service ${index}`, tags: ['cursor-walk'], packages: [{ name: 'Basic', price, deliveryDays: 2, revisions: 1 }] }))
      }
    })

    const walk = async (query: string) => {
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const page: ListJson = await list(`/categories/${category}/services?limit=2&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        seen.push(...page.items.map((item) => item.id))
        cursor = page.pagination.nextCursor
      } while (cursor)
      return seen
    }

    it.each(['sortBy=price', 'sortBy=price&sortOrder=desc', 'sortBy=createdAt', 'sortBy=createdAt&sortOrder=asc', 'sortBy=rating', 'search=cursor%20walk', 'tags=cursor-walk&sortBy=price', 'tags=cursor-walk&sortBy=createdAt&sortOrder=asc'])(
      'gives the same services in the same order as page/limit (%s)',
      async (query) => {
        const byPages = (await list(`/categories/${category}/services?limit=10&${query}`)).items.map((item) => item.id)
        expect(byPages).toHaveLength(5)
        expect(await walk(query)).toEqual(byPages)
      },
    )

    it('pages a tag by offset as the cursors walk it (page 2 of 2 at a time)', async () => {
      const walked = await walk('tags=cursor-walk&sortBy=price')
      const second = await list(`/services?tags=cursor-walk&sortBy=price&limit=2&page=2`)
      expect(second.items.map((item) => item.id)).toEqual(walked.slice(2, 4))
      expect(second.pagination).toMatchObject({ total: 5, totalIsExact: true, hasNext: true, hasPrev: true })
    })

    it('ends with nextCursor null on the last page', async () => {
      const page = await list(`/categories/${category}/services?limit=10`)
      expect(page.pagination).toMatchObject({ nextCursor: null, hasNext: false })
    })

    it('refuses a cursor of another sort, a made-up one, and one combined with page (400 on cursor)', async () => {
      const first = await list(`/categories/${category}/services?limit=2&sortBy=price`)
      const cursor = encodeURIComponent(first.pagination.nextCursor!)
      const url = `/categories/${category}/services`
      expectError(await request(ctx.app, { method: 'GET', url: `${url}?sortBy=createdAt&cursor=${cursor}` }), 400, 'VALIDATION_ERROR', ['cursor'])
      expectError(await request(ctx.app, { method: 'GET', url: `${url}?sortBy=price&sortOrder=desc&cursor=${cursor}` }), 400, 'VALIDATION_ERROR', ['cursor'])
      expectError(await request(ctx.app, { method: 'GET', url: `${url}?sortBy=price&page=2&cursor=${cursor}` }), 400, 'VALIDATION_ERROR', ['cursor'])
      for (const bad of ['nonsense', Buffer.from('{"sortBy":"price","sortOrder":"asc","id":"1; drop"}').toString('base64url'), Buffer.from('[]').toString('base64url')]) {
        expectError(await request(ctx.app, { method: 'GET', url: `/services?sortBy=price&cursor=${bad}` }), 400, 'VALIDATION_ERROR', ['cursor'])
      }
    })
  })

  describe('pages of any size', () => {
    let category: string
    let ids: string[]
    beforeAll(async () => {
      category = await createCategory(ctx, 'Sizes')
      ids = []
      for (let index = 0; index < 3; index++) ids.push(await publishActive(category, { title: `Size ${index}` }))
      ids.reverse()
    })

    // The statements read a fixed number of rows (21 or 101) and build only the page's items; the
    // row past them says that a next page exists.
    it.each([
      ['a category list', ''],
      ['a filtered list', '&deliveryDays=30'],
    ])('answers %s with exactly the items asked for and tells whether more follow', async (_name, filter) => {
      const all = await list(`/services?category=${category}&limit=3${filter}`)
      expect(all.items.map((item) => item.id)).toEqual(ids)
      expect(all.pagination).toMatchObject({ total: 3, hasNext: false, nextCursor: null })
      const wide = await list(`/services?category=${category}&limit=25${filter}`)
      expect(wide.items.map((item) => item.id)).toEqual(ids)
      expect(wide.pagination).toMatchObject({ hasNext: false, nextCursor: null })
      const first = await list(`/services?category=${category}&limit=2${filter}`)
      expect(first.items.map((item) => item.id)).toEqual(ids.slice(0, 2))
      expect(first.pagination.hasNext).toBe(true)
      const next = await list(`/services?category=${category}&limit=2${filter}&cursor=${first.pagination.nextCursor}`)
      expect(next.items.map((item) => item.id)).toEqual(ids.slice(2))
      expect(next.pagination).toMatchObject({ hasNext: false, nextCursor: null })
      const byOffset = await list(`/services?category=${category}&limit=1&page=2${filter}`)
      expect(byOffset.items.map((item) => item.id)).toEqual([ids[1]])
      expect(byOffset.pagination).toMatchObject({ hasNext: true, hasPrev: true })
    })
  })

  describe('misspellings', () => {
    let minimalist: string
    let cards: string
    beforeAll(async () => {
      const category = await createCategory(ctx, 'Spelling')
      minimalist = await publishActive(category, { title: 'A minimalist logo for your brand' })
      cards = await publishActive(category, { title: 'Business cards designed and printed', tags: ['stationery'] })
    })

    it.each([
      ['minimlist', 'minimalist'],
      ['buisness cards', 'cards'],
      ['bussines cards', 'cards'],
      ['minimalist', 'minimalist'],
    ])('finds %s', async (search, expected) => {
      const page = await list(`/services?search=${encodeURIComponent(search)}`)
      expect(page.items[0]?.id).toBe(expected === 'minimalist' ? minimalist : cards)
    })

    it('finds nothing for words near no known word', async () => {
      const page = await list('/services?search=qzxv%20wqyj')
      expect(page.items).toEqual([])
      expect(page.pagination).toMatchObject({ total: 0, totalIsExact: true, nextCursor: null })
    })
  })
})
