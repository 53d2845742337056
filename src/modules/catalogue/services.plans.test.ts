import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestDatabase } from '../../../test/setup/test-app.ts'
import { rowsOf, type Database, type Db } from '../../db/client.ts'
import { publicFilesJsonSql, publicFileUrlSql } from '../uploads/uploads.repository.ts'
import { atSellerLevelSql, levelsAboveNewSql, publicSummarySql, sellerLevelSql, sellersAboveNewSql } from '../users/users.repository.ts'
import { newId } from '../../lib/ids.ts'
import { COUNT_CAP } from './service-list-pages.ts'
import { pageReadingOf, prepareCommonList, prepareFilteredList, searchReadingOf, type FilteredListValues, type PageReading, type ServiceViews } from './services.repository.ts'

const filesBase = 'http://localhost:8000/api/v1/uploads/'
const views: ServiceViews = {
  sellerOf: (userId) => publicSummarySql(userId, (id) => publicFileUrlSql(filesBase, 'user', id, 'avatar')),
  levelOf: sellerLevelSql,
  atLevels: atSellerLevelSql,
  sellersAbove: sellersAboveNewSql,
  levelsAboveNew: levelsAboveNewSql,
  bannerOf: (serviceId) => publicFileUrlSql(filesBase, 'service', serviceId, 'service_banner'),
  galleryOf: (serviceId) => publicFilesJsonSql(filesBase, 'service', serviceId, 'service_gallery'),
}

/**
 * PostgreSQL plans each statement for its values unless a generic plan costs no more (decision
 * 0126). The common lists and searches are written so that one generic plan serves every page:
 * on one connection, after PostgreSQL's five trial plans for the values, each call reuses it.
 * A page number the planner could see (a bare `OFFSET $1`) makes every plan for the values look
 * cheaper than the generic one, and each call would be planned again.
 */
describe('the common lists and searches keep one generic plan on PostgreSQL', () => {
  let database: Database
  let drop: () => Promise<void>
  let client: pg.PoolClient
  let connection: Db
  beforeAll(async () => {
    ;({ database, drop } = await openTestDatabase({ direct: true }))
    if (database.kind !== 'postgres') return
    client = await database.pool.connect()
    connection = drizzle(client)
  })
  afterAll(async () => {
    client?.release()
    await drop()
  })

  const plansOf = async (name: string) => {
    const { rows } = await client.query<{ generic_plans: string | number; custom_plans: string | number }>('select generic_plans, custom_plans from pg_prepared_statements where name = $1', [name])
    return { generic: Number(rows[0]?.generic_plans), custom: Number(rows[0]?.custom_plans) }
  }

  it('plans a category list by page once, generically', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    const list = prepareCommonList({ category: 'slug', sortBy: 'price', sortOrder: 'asc', paging: 'offset', rows: 21 }, views)
    for (let page = 2; page <= 11; page++) await list(connection, { category: 'graphics-design', offset: (page - 1) * 20, limit: 20 })
    expect(await plansOf('catalogue_list_slug_price_asc_offset_21')).toEqual({ generic: 5, custom: 5 })
  })

  it('plans a whole-catalogue list by page once, generically', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    const list = prepareCommonList({ category: 'none', sortBy: 'createdAt', sortOrder: 'desc', paging: 'offset', rows: 21 }, views)
    for (let page = 2; page <= 11; page++) await list(connection, { offset: (page - 1) * 20, limit: 20 })
    expect(await plansOf('catalogue_list_none_createdAt_desc_offset_21')).toEqual({ generic: 5, custom: 5 })
  })

  const none: FilteredListValues = {
    category: null,
    search: null,
    minPriceCents: null,
    maxPriceCents: null,
    deliveryDays: null,
    minRating: null,
    levels: null,
    online: null,
    sellerId: null,
    tags: null,
    after: null,
    offset: 0,
    limit: 20,
  }

  it('plans a search by page once, generically, the correction decided inside it, with filters or without', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    for (const [reads, filter] of [
      ['words', {}],
      ['walk', { minRating: 4 }],
    ] as const) {
      const search = prepareFilteredList({ category: 'none', sortBy: 'relevance', sortOrder: 'desc', rows: 21, narrowed: false, tagged: false, facets: false, reads }, COUNT_CAP, views)
      for (let page = 2; page <= 11; page++) await search(connection, { ...none, ...filter, search: page % 2 ? 'logo design' : 'logo desgin', offset: (page - 1) * 20 })
      expect(await plansOf(`catalogue_search_none_21${reads === 'words' ? '_words' : ''}`)).toEqual({ generic: 5, custom: 5 })
    }
  })

  it('plans a filtered list by page once, generically, whichever filters it is given', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    const list = prepareFilteredList({ category: 'ref', sortBy: 'createdAt', sortOrder: 'desc', rows: 21, narrowed: false, tagged: false, facets: true, reads: 'walk' }, COUNT_CAP, views)
    const filters: Partial<FilteredListValues>[] = [{ deliveryDays: 3 }, { minRating: 4.5 }, { levels: 'level_two,top_rated' }, { minPriceCents: 2000, maxPriceCents: 5000 }, { online: '' }]
    for (let call = 0; call < 10; call++) await list(connection, { ...none, ...filters[call % filters.length], category: 'graphics-design', offset: call * 20 })
    expect(await plansOf('catalogue_filtered_ref_createdAt_desc_21_facets')).toEqual({ generic: 5, custom: 5 })
  })

  it('plans each whole-catalogue filtered list once, generically, whichever values its way of reading the page is chosen for', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    const online = `${newId()},${newId()}`
    const filters: Partial<FilteredListValues>[] = [
      { minRating: 4.5 },
      { minRating: 4, deliveryDays: 3 },
      { online },
      { levels: 'top_rated' },
      { minRating: 3, minPriceCents: 2000, online: '' },
      { levels: 'new,level_one' },
      { minRating: 3 },
      { deliveryDays: 2 },
      { levels: 'level_one,level_two', minRating: 4 },
      { minPriceCents: 2000 },
      { deliveryDays: 1, levels: 'new,top_rated' },
      { deliveryDays: 3, levels: 'new' },
    ]
    const readings: Record<PageReading, Partial<FilteredListValues>[]> = { walk: [], rating: [], sellers: [], days: [], daysAtLevels: [], words: [] }
    for (const filter of filters) readings[pageReadingOf({ category: 'none', facets: false }, { ...none, ...filter })].push(filter)
    expect(Object.values(readings).map((values) => values.length)).toEqual([3, 2, 4, 1, 2, 0])
    for (const [reads, values] of (Object.entries(readings) as [PageReading, Partial<FilteredListValues>[]][]).filter(([, values]) => values.length > 0)) {
      const list = prepareFilteredList({ category: 'none', sortBy: 'createdAt', sortOrder: 'desc', rows: 21, narrowed: false, tagged: false, facets: false, reads }, COUNT_CAP, views)
      for (let call = 0; call < 10; call++) await list(connection, { ...none, ...values[call % values.length], offset: call * 20 })
      expect(await plansOf(`catalogue_filtered_none_createdAt_desc_21${reads === 'walk' ? '' : `_${reads}`}`)).toEqual({ generic: 5, custom: 5 })
    }
  })

  it('plans a list narrowed by tags once, generically, whichever tags and filters it is given', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    const list = prepareFilteredList({ category: 'none', sortBy: 'price', sortOrder: 'asc', rows: 21, narrowed: false, tagged: true, facets: false, reads: 'walk' }, COUNT_CAP, views)
    const filters: Partial<FilteredListValues>[] = [{ tags: 'logo' }, { tags: 'logo,print', minRating: 4 }, { tags: 'nothing-like-it' }, { tags: 'print', minPriceCents: 2000, maxPriceCents: 5000 }, { tags: 'logo', levels: 'new' }]
    for (let call = 0; call < 10; call++) await list(connection, { ...none, ...filters[call % filters.length], offset: call * 20 })
    expect(await plansOf('catalogue_filtered_none_price_asc_21_tagged')).toEqual({ generic: 5, custom: 5 })
  })

  it('reads the first file of an object (an avatar, a banner) from the index, in order, with no sort', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    // Every list item reads two of these; a Sort under each would run once per item.
    const first = publicFileUrlSql(filesBase, 'service', sql`${'00000000-0000-4000-8000-000000000000'}::uuid`, 'service_banner')
    await client.query('begin')
    try {
      await client.query('set local enable_seqscan = off')
      const plan = await rowsOf<{ 'QUERY PLAN': string }>(connection, sql`explain select ${first} as url`)
      const text = plan.map((row) => row['QUERY PLAN']).join('\n')
      expect(text).toContain('uploads_object_idx')
      expect(text).not.toMatch(/Sort/)
    } finally {
      await client.query('rollback')
    }
  })
})

describe('the way a filtered list reads its page', () => {
  const none = { minPriceCents: null, maxPriceCents: null, deliveryDays: null, minRating: null, levels: null, online: null }
  const whole = { category: 'none', facets: false } as const

  it('reads by the rating alone only when a lowest rating is the whole catalogue list’s only filter', () => {
    expect(pageReadingOf(whole, { ...none, minRating: 4.5 })).toBe('rating')
    expect(pageReadingOf({ ...whole, facets: true }, { ...none, minRating: 4.5 })).toBe('rating')
    expect(pageReadingOf({ category: 'ref', facets: false }, { ...none, minRating: 4.5 })).toBe('walk')
    for (const other of [{ minPriceCents: 100 }, { maxPriceCents: 100 }, { deliveryDays: 3 }]) expect(pageReadingOf(whole, { ...none, minRating: 4.5, ...other })).toBe('walk')
  })

  it('reads the services that deliver in time first for a delivery filter on the whole catalogue, with no price or rating bound, facets or sellers to read first', () => {
    expect(pageReadingOf(whole, { ...none, deliveryDays: 1 })).toBe('days')
    // Levels that include `new` keep the delivery index first, in statements of their own.
    expect(pageReadingOf(whole, { ...none, deliveryDays: 2, levels: 'new,level_one' })).toBe('daysAtLevels')
    expect(pageReadingOf(whole, { ...none, deliveryDays: 2, levels: 'new' })).toBe('daysAtLevels')
    expect(pageReadingOf({ category: 'ref', facets: false }, { ...none, deliveryDays: 3 })).toBe('walk')
    for (const bound of [{ minPriceCents: 100 }, { maxPriceCents: 100 }, { minRating: 4 }]) expect(pageReadingOf(whole, { ...none, deliveryDays: 3, ...bound })).toBe('walk')
    expect(pageReadingOf({ ...whole, facets: true }, { ...none, deliveryDays: 1 })).toBe('walk')
    expect(pageReadingOf({ ...whole, facets: true }, { ...none, deliveryDays: 1, levels: 'new' })).toBe('walk')
    expect(pageReadingOf(whole, { ...none, deliveryDays: 1, online: '' })).toBe('sellers')
    expect(pageReadingOf(whole, { ...none, deliveryDays: 1, levels: 'top_rated' })).toBe('sellers')
  })

  it('reads a search’s candidates for its words alone when no filter is used', () => {
    const unfiltered = { ...none, sellerId: null, tags: null }
    expect(searchReadingOf(unfiltered)).toBe('words')
    for (const filter of [{ minPriceCents: 1 }, { maxPriceCents: 1 }, { deliveryDays: 1 }, { minRating: 1 }, { levels: 'new' }, { online: '' }, { sellerId: newId() }, { tags: 'logo' }]) {
      expect(searchReadingOf({ ...unfiltered, ...filter })).toBe('walk')
    }
  })

  it('reads the sellers’ services first for sellers online or levels above new, without facets', () => {
    expect(pageReadingOf(whole, { ...none, online: '' })).toBe('sellers')
    expect(pageReadingOf({ category: 'ref', facets: false }, { ...none, online: newId() })).toBe('sellers')
    expect(pageReadingOf(whole, { ...none, levels: 'top_rated,level_two', minRating: 4 })).toBe('sellers')
    expect(pageReadingOf(whole, { ...none, levels: 'level_one,new' })).toBe('walk')
    expect(pageReadingOf({ ...whole, facets: true }, { ...none, levels: 'top_rated' })).toBe('walk')
    expect(pageReadingOf(whole, none)).toBe('walk')
  })
})
