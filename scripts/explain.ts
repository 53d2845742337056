/**
 * `npm run explain`: prints the plan of every hot catalogue statement and fails when one of them
 * reads the services table sequentially. Needs DATABASE_URL to a PostgreSQL database seeded with
 * `npm run seed -- --services 100000`.
 *
 * The SQL is not copied here: the repository's own prepared statements run on a Drizzle instance
 * whose logger records each one's text and values, and those are explained. A statement the
 * application runs by name is explained with the generic plan PostgreSQL settles on (decision
 * 0126), one it sends unnamed with the plan made for its values. A change to the repository's
 * statements is therefore checked as it is.
 */
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import type { Db } from '../src/db/client.ts'
import { createCategoriesRepository } from '../src/modules/catalogue/categories.repository.ts'
import { COUNT_CAP } from '../src/modules/catalogue/service-list-pages.ts'
import {
  prepareCommonList,
  prepareFilteredList,
  prepareServiceRead,
  type CommonListShape,
  type FilteredListShape,
  type FilteredListValues,
  type ServiceViews,
} from '../src/modules/catalogue/services.repository.ts'
import { publicFilesJsonSql, publicFileUrlSql } from '../src/modules/uploads/uploads.repository.ts'
import { atSellerLevelSql, levelsAboveNewSql, publicSummarySql, sellerLevelSql, sellersAboveNewSql } from '../src/modules/users/users.repository.ts'

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
const list = (shape: Partial<FilteredListShape>): FilteredListShape => ({ category: 'none', sortBy: 'createdAt', sortOrder: 'desc', rows: 21, narrowed: false, tagged: false, facets: false, reads: 'walk', ...shape })
const common = (shape: Partial<CommonListShape>): CommonListShape => ({ category: 'none', sortBy: 'createdAt', sortOrder: 'desc', paging: 'first', rows: 21, ...shape })

type HotPath = { name: string; /** An index the plan must read the services through. */ through?: string } & ({ common: CommonListShape; values: { category?: string; offset?: number } } | { shape: FilteredListShape; values: Partial<FilteredListValues> })

// The shapes GET /services and GET /categories/{id}/services produce (prices in cents).
const HOT_PATHS: HotPath[] = [
  { name: 'list, newest first', common: common({}), values: {} },
  { name: 'list, cheapest first', common: common({ sortBy: 'price', sortOrder: 'asc' }), values: {} },
  { name: 'list, best rated first', common: common({ sortBy: 'rating' }), values: {} },
  { name: 'list, page 50 by offset', common: common({ paging: 'offset' }), values: { offset: 980 } },
  { name: 'category (top level), newest first', common: common({ category: 'slug' }), values: { category: 'graphics-design' } },
  { name: 'category (top level), cheapest first', common: common({ category: 'slug', sortBy: 'price', sortOrder: 'asc' }), values: { category: 'graphics-design' } },
  { name: 'subcategory, best rated first', common: common({ category: 'slug', sortBy: 'rating' }), values: { category: 'logo-design' } },
  { name: 'delivery in 3 days at most, newest first', shape: list({ reads: 'days' }), values: { deliveryDays: 3 }, through: 'services_active_delivery_idx' },
  { name: 'delivery in 0 days (none deliver that fast), newest first', shape: list({ reads: 'days' }), values: { deliveryDays: 0 }, through: 'services_active_delivery_idx' },
  { name: 'rated 4.5 or more, newest first', shape: list({ reads: 'rating' }), values: { minRating: 4.5 } },
  { name: 'sellers level two or top rated, newest first', shape: list({ reads: 'sellers' }), values: { levels: 'level_two,top_rated' }, through: 'services_seller_idx' },
  { name: 'sellers online (two unknown), newest first', shape: list({ reads: 'sellers' }), values: { online: '00000000-0000-4000-8000-000000000001,00000000-0000-4000-8000-000000000002' }, through: 'services_seller_idx' },
  { name: 'sellers online (none), newest first', shape: list({ reads: 'sellers' }), values: { online: '' } },
  { name: 'price 20.00 to 50.00, newest first', shape: list({}), values: { minPriceCents: 2000, maxPriceCents: 5000 } },
  { name: 'price 250.00 and more, cheapest first', shape: list({ sortBy: 'price', sortOrder: 'asc' }), values: { minPriceCents: 25000 } },
  { name: 'category with a delivery filter, best rated first', shape: list({ category: 'ref', sortBy: 'rating' }), values: { category: 'graphics-design', deliveryDays: 3 } },
  { name: 'delivery in 3 days at most, cheapest first', shape: list({ sortBy: 'price', sortOrder: 'asc', reads: 'days' }), values: { deliveryDays: 3 }, through: 'services_active_delivery_idx' },
  { name: 'delivery in 1 day at most, sellers new or level one, newest first', shape: list({ reads: 'daysAtLevels' }), values: { deliveryDays: 1, levels: 'new,level_one' }, through: 'services_active_delivery_idx' },
  { name: 'whole catalogue with facets', shape: list({ facets: true }), values: {} },
  { name: 'category with a level filter and facets', shape: list({ category: 'ref', facets: true }), values: { category: 'graphics-design', levels: 'top_rated' } },
  { name: 'tags "logo design"', shape: list({ tagged: true }), values: { tags: 'logo design' } },
  { name: 'search "logo design" (full text), relevance', shape: list({ sortBy: 'relevance', reads: 'words' }), values: { search: 'logo design' } },
  { name: 'search "logo design", relevance, with facets', shape: list({ sortBy: 'relevance', facets: true, reads: 'words' }), values: { search: 'logo design' } },
  { name: 'search "logo design", cheapest first (planned for the values)', shape: list({ sortBy: 'price', sortOrder: 'asc', narrowed: true }), values: { search: 'logo design' } },
  { name: 'search "logo desgin" (typo: corrected in the statement), relevance', shape: list({ sortBy: 'relevance', reads: 'words' }), values: { search: 'logo desgin' } },
  { name: 'search "48213" (a word of one description), relevance', shape: list({ sortBy: 'relevance', reads: 'words' }), values: { search: '48213' } },
]

const url = process.env.DATABASE_URL
if (!url?.startsWith('postgres')) {
  console.error('explain needs DATABASE_URL=postgres://... (a database seeded with `npm run seed -- --services 100000`)')
  process.exit(2)
}

const pool = new pg.Pool({ connectionString: url, max: 2 })
const captured: { query: string; params: unknown[] }[] = []
const db = drizzle(pool, { logger: { logQuery: (query, params) => captured.push({ query, params }) } }) as unknown as Db
// The same SQL the users and uploads services contribute (the base URL does not change the plans).
const filesBase = 'http://localhost:3000/api/v1/uploads'
const views: ServiceViews = {
  sellerOf: (userId) => publicSummarySql(userId, (id) => publicFileUrlSql(filesBase, 'user', id, 'avatar')),
  levelOf: sellerLevelSql,
  atLevels: atSellerLevelSql,
  sellersAbove: sellersAboveNewSql,
  levelsAboveNew: levelsAboveNewSql,
  bannerOf: (serviceId) => publicFileUrlSql(filesBase, 'service', serviceId, 'service_banner'),
  galleryOf: (serviceId) => publicFilesJsonSql(filesBase, 'service', serviceId, 'service_gallery'),
}

/** The plan of `query`: generic (as a named statement settles on), or for its values. */
async function planOf(client: pg.PoolClient, query: string, params: unknown[], generic: boolean): Promise<string[]> {
  if (!generic) return (await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${query}`, params)).rows.map((row) => row['QUERY PLAN'])
  const args = params.map((value) => (value === null || value === undefined ? 'null' : client.escapeLiteral(typeof value === 'string' ? value : JSON.stringify(value)))).join(', ')
  await client.query(`prepare explained as ${query}`)
  try {
    await client.query('set plan_cache_mode = force_generic_plan')
    return (await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) execute explained(${args})`)).rows.map((row) => row['QUERY PLAN'])
  } finally {
    await client.query('reset plan_cache_mode')
    await client.query('deallocate explained')
  }
}

let failures = 0
const client = await pool.connect()
try {
  const counted = await pool.query<{ total: string }>(`select count(*) as total from services where status = 'active' and deleted_at is null`)
  const active = Number(counted.rows[0]?.total ?? 0)
  console.log(`${active} active services`)
  if (active < 50_000) console.warn('warning: fewer than 50000 active services; the planner may prefer sequential scans on a small table. Seed with --services 100000.')

  const explain = async (name: string, generic: boolean, run: () => Promise<unknown>, through?: string) => {
    captured.length = 0
    await run()
    for (const { query, params } of captured) {
      const lines = await planOf(client, query, params, generic)
      const seqScan = lines.some((line) => /Seq Scan on services\b/.test(line))
      const missed = through !== undefined && !lines.some((line) => line.includes(`using ${through} on services`) || line.includes(`Bitmap Index Scan on ${through}`))
      if (seqScan || missed) failures++
      const warning = `${seqScan ? '  <-- SEQ SCAN ON services' : ''}${missed ? `  <-- NOT THROUGH ${through}` : ''}`
      console.log(`\n== ${name} (${generic ? 'generic plan' : 'planned for its values'})${warning}\n${query}`)
      console.log(lines.map((line) => `   ${line}`).join('\n'))
    }
  }

  const [sample] = (await pool.query<{ id: string }>(`select id from services where status = 'active' and deleted_at is null order by created_at desc limit 1`)).rows
  if (sample) await explain('one service with its category, packages, extras, seller and images', true, () => prepareServiceRead(db, views)(sample.id, null))
  await explain('category tree counts', false, () => createCategoriesRepository(db).countActiveServices())

  for (const path of HOT_PATHS) {
    if ('common' in path) await explain(path.name, true, () => prepareCommonList(path.common, views)(db, { limit: 20, ...path.values }))
    else await explain(path.name, !path.shape.narrowed, () => prepareFilteredList(path.shape, COUNT_CAP, views).unnamed(db, { ...none, ...path.values }), path.through)
  }
} finally {
  client.release()
  await pool.end()
}

if (failures > 0) {
  console.error(`\n${failures} plan(s) read the services table sequentially or not through the index they must`)
  process.exit(1)
}
console.log('\nno sequential scan on services in any hot path')
