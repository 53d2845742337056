import { drizzle } from 'drizzle-orm/node-postgres'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestDatabase } from '../../../test/setup/test-app.ts'
import type { Database, Db } from '../../db/client.ts'
import { publicFilesJsonSql, publicFileUrlSql } from '../uploads/uploads.repository.ts'
import { publicSummarySql } from '../users/users.repository.ts'
import { COUNT_CAP } from './service-list-pages.ts'
import { prepareCommonList, prepareCommonSearch, type ServiceViews } from './services.repository.ts'

const filesBase = 'http://localhost:8000/api/v1/uploads/'
const views: ServiceViews = {
  sellerOf: (userId) => publicSummarySql(userId, (id) => publicFileUrlSql(filesBase, 'user', id, 'avatar')),
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
    for (let page = 2; page <= 11; page++) await list(connection, { category: 'graphics-design', offset: (page - 1) * 20 })
    expect(await plansOf('catalogue_list_slug_price_asc_offset_21')).toEqual({ generic: 5, custom: 5 })
  })

  it('plans a whole-catalogue list by page once, generically', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    const list = prepareCommonList({ category: 'none', sortBy: 'createdAt', sortOrder: 'desc', paging: 'offset', rows: 21 }, views)
    for (let page = 2; page <= 11; page++) await list(connection, { offset: (page - 1) * 20 })
    expect(await plansOf('catalogue_list_none_createdAt_desc_offset_21')).toEqual({ generic: 5, custom: 5 })
  })

  it('plans a search by page once, generically', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    const search = prepareCommonSearch({ paging: 'offset', rows: 21, corrected: false }, COUNT_CAP, views)
    for (let page = 2; page <= 11; page++) await search(connection, { search: 'logo design', offset: (page - 1) * 20 })
    expect(await plansOf('catalogue_search_offset_21')).toEqual({ generic: 5, custom: 5 })
  })
})
