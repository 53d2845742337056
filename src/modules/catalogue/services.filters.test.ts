import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createListings, type Listings } from '../../../test/factories/services.ts'
import { createUser } from '../../../test/factories/users.ts'
import { listen, openSocket } from '../../../test/setup/sockets.ts'
import { createTestApp, expectError, request, TEST_REDIS_URL, type TestContext } from '../../../test/setup/test-app.ts'
import { users } from '../users/users.table.ts'
import { ONLINE_SELLERS_TTL_MS } from './seller-presence.service.ts'

interface ItemJson {
  id: string
  sellerLevel: string
  seller: { id: string }
}
interface PageJson {
  items: ItemJson[]
  pagination: { total: number; totalIsExact: boolean; hasNext: boolean; nextCursor: string | null }
}

describe('search filters (GET /services, GET /categories/{id}/services)', () => {
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
  /** The keys of the services a list answers, sorted, unless the order is what is checked. */
  const found = async (query: string, path?: string) => {
    const byId = new Map(Object.entries(data.ids).map(([key, id]) => [id, key]))
    return (await page(query, path)).items.map((item) => byId.get(item.id) ?? item.id)
  }
  const foundSorted = async (query: string, path?: string) => (await found(query, path)).sort()

  it('keeps services whose cheapest package delivers within deliveryDays', async () => {
    expect(await foundSorted('deliveryDays=3')).toEqual(['express', 'website'])
    expect(await foundSorted('deliveryDays=1')).toEqual(['express'])
    expect(await foundSorted('deliveryDays=7')).toEqual(['cards', 'express', 'flyer', 'website'])
    expect(await foundSorted('deliveryDays=90')).toEqual(['cards', 'express', 'flyer', 'mascot', 'website'])
  })

  it('keeps services rated at least minRating on average (unrated ones count as 0)', async () => {
    expect(await foundSorted('minRating=4.5')).toEqual(['express'])
    expect(await foundSorted('minRating=4')).toEqual(['express', 'flyer', 'website'])
    expect(await foundSorted('minRating=0')).toEqual(['cards', 'express', 'flyer', 'mascot', 'website'])
    expect(await foundSorted('minRating=5')).toEqual([])
  })

  it('keeps sellers at one of the levels, comma-separated or repeated alike', async () => {
    expect(await foundSorted('sellerLevel=top_rated')).toEqual(['express', 'website'])
    expect(await foundSorted('sellerLevel=level_one,top_rated')).toEqual(['cards', 'express', 'mascot', 'website'])
    expect(await foundSorted('sellerLevel=new&sellerLevel=level_one')).toEqual(['cards', 'flyer', 'mascot'])
    expect(await foundSorted('sellerLevel=new,level_one&sellerLevel=new')).toEqual(['cards', 'flyer', 'mascot'])
    expect(await foundSorted('sellerLevel=level_two')).toEqual([])
  })

  it('keeps services carrying any of the tags', async () => {
    expect(await foundSorted('tags=logo')).toEqual(['express', 'mascot'])
    expect(await foundSorted('tags=logo,print')).toEqual(['cards', 'express', 'flyer', 'mascot'])
    expect(await foundSorted('tags=nothing-like-it')).toEqual([])
  })

  it('combines filters with each other, a category, a search and every sort', async () => {
    expect(await foundSorted('deliveryDays=5&sellerLevel=level_one')).toEqual(['cards'])
    expect(await foundSorted('deliveryDays=7&sellerLevel=new,level_one')).toEqual(['cards', 'flyer'])
    expect(await foundSorted('deliveryDays=7&sellerLevel=new')).toEqual(['flyer'])
    expect(await foundSorted('tags=logo&minRating=4.5')).toEqual(['express'])
    expect(await foundSorted(`category=${data.parent.slug}&deliveryDays=3`)).toEqual(['express', 'website'])
    expect(await foundSorted('minRating=4', `/categories/${data.parent.id}/services`)).toEqual(['express', 'website'])
    expect(await foundSorted('deliveryDays=10', `/categories/${data.child.slug}/services`)).toEqual(['express', 'mascot'])
    expect(await found('minPrice=25&maxPrice=150&deliveryDays=7&sortBy=price')).toEqual(['flyer', 'website', 'cards'])
    expect(await found('sellerLevel=level_one,top_rated&sortBy=price&sortOrder=desc')).toEqual(['mascot', 'cards', 'website', 'express'])
    expect(await found('minRating=0&sortBy=rating')).toEqual(['express', 'website', 'flyer', 'cards', 'mascot'])
    expect(await found('search=logo&deliveryDays=1')).toEqual(['express'])
    expect(await found('search=logo&sortBy=price&sellerLevel=level_one')).toEqual(['mascot'])
    expect(await found(`search=logo&sellerId=${data.sellers.top.id}&minRating=4`)).toEqual(['express'])
    expect(await foundSorted(`search=design&tags=print&sellerLevel=new`)).toEqual(['flyer'])
  })

  /** A list of the five services walked by cursor two at a time: each once, in the order of the whole list. */
  const threePagesOfTwo = async (query: string) => {
    const first = await page(`${query}&limit=2`)
    expect(first.pagination).toMatchObject({ total: 5, totalIsExact: true, hasNext: true })
    const second = await page(`${query}&limit=2&cursor=${first.pagination.nextCursor}`)
    const third = await page(`${query}&limit=2&cursor=${second.pagination.nextCursor}`)
    expect(third.pagination).toMatchObject({ hasNext: false, nextCursor: null })
    const seen = [...first.items, ...second.items, ...third.items].map((item) => item.id)
    expect(seen).toEqual((await page(query)).items.map((item) => item.id))
    return [first, second, third] as const
  }

  it('takes a lowest rating with any other filter, and pages a list filtered by a rating alone', async () => {
    expect(await foundSorted('minRating=4&deliveryDays=3')).toEqual(['express', 'website'])
    expect(await foundSorted('minRating=4&sellerLevel=new')).toEqual(['flyer'])
    expect(await foundSorted('minRating=4&maxPrice=40')).toEqual(['express', 'flyer'])
    expect(await found('minRating=4&sortBy=price&sortOrder=desc')).toEqual(['website', 'flyer', 'express'])
    const [, second] = await threePagesOfTwo('minRating=0')
    expect((await page('minRating=0&limit=2&page=2')).items.map((item) => item.id)).toEqual(second.items.map((item) => item.id))
  })

  it('pages a list of the sellers at some levels by cursor and by page, in its order', async () => {
    const query = 'sellerLevel=level_one,top_rated&sortBy=price&limit=3'
    const first = await page(query)
    expect(first.pagination).toMatchObject({ total: 4, totalIsExact: true, hasNext: true })
    const second = await page(`${query}&cursor=${first.pagination.nextCursor}`)
    expect(second.pagination).toMatchObject({ hasNext: false, nextCursor: null })
    const byId = new Map(Object.entries(data.ids).map(([key, id]) => [id, key]))
    expect([...first.items, ...second.items].map((item) => byId.get(item.id))).toEqual(['express', 'website', 'cards', 'mascot'])
    expect((await page(`${query}&page=2`)).items.map((item) => item.id)).toEqual(second.items.map((item) => item.id))
  })

  it('counts a filtered list exactly under the cap, and pages it by cursor', async () => {
    const [, , third] = await threePagesOfTwo('deliveryDays=10')
    expect((await page('deliveryDays=10&limit=2&page=3')).items.map((item) => item.id)).toEqual(third.items.map((item) => item.id))
    expect((await page('deliveryDays=10&limit=2&page=9')).pagination).toMatchObject({ total: 5, hasNext: false })
  })

  it("shows each seller's level on every list item and on the service, and the change of a level at once", async () => {
    const levelsOf = async (query: string, path?: string) => Object.fromEntries((await page(query, path)).items.map((item) => [item.id, item.sellerLevel]))
    const expected = { [data.ids.express!]: 'top_rated', [data.ids.cards!]: 'level_one', [data.ids.flyer!]: 'new' }
    expect(await levelsOf('')).toMatchObject(expected)
    expect(await levelsOf('minRating=0')).toMatchObject(expected)
    expect(await levelsOf('search=design')).toMatchObject({ [data.ids.express!]: 'top_rated', [data.ids.flyer!]: 'new' })
    expect(await levelsOf('', `/categories/${data.other.slug}/services`)).toEqual({ [data.ids.cards!]: 'level_one', [data.ids.flyer!]: 'new' })
    const one = await request(ctx.app, { method: 'GET', url: `/services/${data.ids.cards}` })
    expect(one.json().data.sellerLevel).toBe('level_one')

    await ctx.database.db.update(users).set({ sellerLevel: 'level_two' }).where(eq(users.id, data.sellers.one.id))
    try {
      expect((await request(ctx.app, { method: 'GET', url: `/services/${data.ids.cards}` })).json().data.sellerLevel).toBe('level_two')
      expect((await levelsOf(''))[data.ids.cards!]).toBe('level_two')
      expect(await foundSorted('sellerLevel=level_two')).toEqual(['cards', 'mascot'])
    } finally {
      await ctx.database.db.update(users).set({ sellerLevel: 'level_one' }).where(eq(users.id, data.sellers.one.id))
    }
  })

  describe('sellerOnline', () => {
    let url: string
    beforeAll(async () => {
      url = await listen(ctx.app)
    })

    it('keeps only sellers with an open chat socket, within a second of it opening or closing', async () => {
      const hub = ctx.app.container.realtime
      expect(await page('sellerOnline=true')).toMatchObject({ items: [], pagination: { total: 0, totalIsExact: true } })
      expect(await foundSorted('sellerOnline=false')).toEqual(['cards', 'express', 'flyer', 'mascot', 'website'])

      const socket = await openSocket(url, { header: data.sellers.one.token })
      await vi.waitFor(async () => expect(await hub.isOnline(data.sellers.one.id)).toBe(true))
      ctx.clock.advance(ONLINE_SELLERS_TTL_MS)
      expect(await foundSorted('sellerOnline=true')).toEqual(['cards', 'mascot'])
      expect(await foundSorted('sellerOnline=true&tags=logo')).toEqual(['mascot'])
      expect(await foundSorted('sellerOnline=true', `/categories/${data.other.slug}/services`)).toEqual(['cards'])
      expect(await found('sellerOnline=true&search=logo')).toEqual(['mascot'])

      socket.close()
      await vi.waitFor(async () => expect(await hub.isOnline(data.sellers.one.id)).toBe(false))
      // Within the second the list is kept, it still shows the seller; then no longer.
      expect(await foundSorted('sellerOnline=true')).toEqual(['cards', 'mascot'])
      ctx.clock.advance(ONLINE_SELLERS_TTL_MS)
      expect(await foundSorted('sellerOnline=true')).toEqual([])
    })

    it('does not count a buyer online, or a seller whose services are not active, as a seller online', async () => {
      const buyer = await createUser(ctx)
      const buyerSocket = await openSocket(url, { header: buyer.accessToken })
      const fresh = await openSocket(url, { header: data.sellers.fresh.token })
      try {
        await vi.waitFor(async () => expect(await ctx.app.container.realtime.isOnline(data.sellers.fresh.id)).toBe(true))
        ctx.clock.advance(ONLINE_SELLERS_TTL_MS)
        // The fresh seller's paused service stays out; their active one is in.
        expect(await foundSorted('sellerOnline=true')).toEqual(['flyer'])
      } finally {
        buyerSocket.close()
        fresh.close()
      }
    })
  })

  const invalid: [string, string, string[]][] = [
    ['deliveryDays of 0', 'deliveryDays=0', ['deliveryDays']],
    ['deliveryDays above 90', 'deliveryDays=91', ['deliveryDays']],
    ['a fractional deliveryDays', 'deliveryDays=2.5', ['deliveryDays']],
    ['a deliveryDays that is not a number', 'deliveryDays=soon', ['deliveryDays']],
    ['a negative minRating', 'minRating=-1', ['minRating']],
    ['a minRating above 5', 'minRating=5.5', ['minRating']],
    ['a minRating that is not a number', 'minRating=high', ['minRating']],
    ['an unknown seller level', 'sellerLevel=gold', ['sellerLevel']],
    ['an unknown level among known ones', 'sellerLevel=top_rated,gold', ['sellerLevel']],
    ['an unknown level in a repeated parameter', 'sellerLevel=new&sellerLevel=platinum', ['sellerLevel']],
    ['an empty level', 'sellerLevel=', ['sellerLevel']],
    ['a trailing comma in the levels', 'sellerLevel=new,', ['sellerLevel']],
    ['a sellerOnline that is not a boolean', 'sellerOnline=maybe', ['sellerOnline']],
    ['a facets that is not a boolean', 'facets=yes', ['facets']],
    ['two bad filters at once', 'deliveryDays=0&minRating=9', ['deliveryDays', 'minRating']],
  ]
  it.each(invalid)('refuses %s (400 VALIDATION_ERROR on the parameter)', async (_label, query, fields) => {
    expectError(await request(ctx.app, { method: 'GET', url: `/services?${query}` }), 400, 'VALIDATION_ERROR', fields)
    expectError(await request(ctx.app, { method: 'GET', url: `/categories/${data.parent.slug}/services?${query}` }), 400, 'VALIDATION_ERROR', fields)
  })
})

describe.runIf(TEST_REDIS_URL)('sellerOnline across instances (Redis presence)', () => {
  let first: TestContext
  let second: TestContext

  beforeAll(async () => {
    first = await createTestApp({ env: { REDIS_URL: TEST_REDIS_URL } })
    second = await createTestApp({ env: { REDIS_URL: TEST_REDIS_URL }, database: first.database, clock: first.clock })
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
  })

  it('finds a seller whose socket is open on another instance, and drops them once it closes', async () => {
    const data = await createListings(first)
    const url = await listen(second.app)
    const online = async () =>
      (await request(first.app, { method: 'GET', url: `/categories/${data.other.slug}/services?sellerOnline=true` })).json().data.items.map((item: ItemJson) => item.id)
    expect(await online()).toEqual([])
    const socket = await openSocket(url, { header: data.sellers.one.token })
    await vi.waitFor(async () => expect(await first.app.container.realtime.isOnline(data.sellers.one.id)).toBe(true))
    first.clock.advance(ONLINE_SELLERS_TTL_MS)
    expect(await online()).toEqual([data.ids.cards])
    socket.close()
    await vi.waitFor(async () => expect(await first.app.container.realtime.isOnline(data.sellers.one.id)).toBe(false))
    first.clock.advance(ONLINE_SELLERS_TTL_MS)
    expect(await online()).toEqual([])
  })
})
