/**
 * `npm run explain`: prints the plan of every hot catalogue query and fails when one of them
 * reads the services table sequentially. Needs DATABASE_URL to a PostgreSQL database seeded with
 * `npm run seed -- --services 100000`.
 *
 * The SQL is not copied here: the repository's own `searchActive` runs on a Drizzle instance
 * whose logger records each statement and its parameters, and those are explained. A change to
 * the repository's queries is therefore checked as it is.
 */
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import type { Db } from '../src/db/client.ts'
import { createCategoriesRepository } from '../src/modules/catalogue/categories.repository.ts'
import { createServicesRepository, prepareServiceRead, type PageWindow, type ServiceSearch, type ServiceViews } from '../src/modules/catalogue/services.repository.ts'
import { publicFilesJsonSql, publicFileUrlSql } from '../src/modules/uploads/uploads.repository.ts'
import { publicSummarySql } from '../src/modules/users/users.repository.ts'

interface HotPath {
  name: string
  filter: Omit<ServiceSearch, 'categoryIds'> & { category?: string; fuzzy?: boolean }
  window?: PageWindow
}

// The shapes GET /services and GET /categories/{id}/services produce (prices in cents).
const HOT_PATHS: HotPath[] = [
  { name: 'list, newest first', filter: { sortBy: 'createdAt', sortOrder: 'desc' } },
  { name: 'list, cheapest first', filter: { sortBy: 'price', sortOrder: 'asc' } },
  { name: 'list, best rated first', filter: { sortBy: 'rating', sortOrder: 'desc' } },
  { name: 'list, page 50 by offset', filter: { sortBy: 'createdAt', sortOrder: 'desc' }, window: { offset: 980, limit: 20 } },
  { name: 'category (top level), newest first', filter: { category: 'graphics-design', sortBy: 'createdAt', sortOrder: 'desc' } },
  { name: 'category (top level), cheapest first', filter: { category: 'graphics-design', sortBy: 'price', sortOrder: 'asc' } },
  { name: 'subcategory, newest first', filter: { category: 'logo-design', sortBy: 'createdAt', sortOrder: 'desc' } },
  { name: 'subcategory, best rated first', filter: { category: 'logo-design', sortBy: 'rating', sortOrder: 'desc' } },
  { name: 'price 20.00 to 50.00, newest first', filter: { minPriceCents: 2000, maxPriceCents: 5000, sortBy: 'createdAt', sortOrder: 'desc' } },
  { name: 'price 20.00 to 50.00, cheapest first', filter: { minPriceCents: 2000, maxPriceCents: 5000, sortBy: 'price', sortOrder: 'asc' } },
  { name: 'search "logo design" (full text), relevance', filter: { search: 'logo design', sortBy: 'relevance', sortOrder: 'desc' } },
  { name: 'search "logo design" (full text), cheapest first', filter: { search: 'logo design', sortBy: 'price', sortOrder: 'asc' } },
  { name: 'search "logo desgin" (typo: lexicon and trigram), relevance', filter: { search: 'logo desgin', sortBy: 'relevance', sortOrder: 'desc', fuzzy: true } },
]

const url = process.env.DATABASE_URL
if (!url?.startsWith('postgres')) {
  console.error('explain needs DATABASE_URL=postgres://... (a database seeded with `npm run seed -- --services 100000`)')
  process.exit(2)
}

const pool = new pg.Pool({ connectionString: url, max: 2 })
const captured: { query: string; params: unknown[] }[] = []
const db = drizzle(pool, { logger: { logQuery: (query, params) => captured.push({ query, params }) } }) as unknown as Db
const repository = createServicesRepository(db)
// The same SQL the users and uploads services contribute (the base URL does not change the plans).
const filesBase = 'http://localhost:3000/api/v1/uploads'
const views: ServiceViews = {
  sellerOf: (userId) => publicSummarySql(userId, (id) => publicFileUrlSql(filesBase, 'user', id, 'avatar')),
  bannerOf: (serviceId) => publicFileUrlSql(filesBase, 'service', serviceId, 'service_banner'),
  galleryOf: (serviceId) => publicFilesJsonSql(filesBase, 'service', serviceId, 'service_gallery'),
}

let failures = 0
try {
  const counted = await pool.query<{ total: string }>(`select count(*) as total from services where status = 'active' and deleted_at is null`)
  const active = Number(counted.rows[0]?.total ?? 0)
  console.log(`${active} active services`)
  if (active < 50_000) console.warn('warning: fewer than 50000 active services; the planner may prefer sequential scans on a small table. Seed with --services 100000.')

  const explain = async (name: string, run: () => Promise<unknown>) => {
    captured.length = 0
    await run()
    for (const { query, params } of captured) {
      const plan = await pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${query}`, params)
      const lines = plan.rows.map((row) => row['QUERY PLAN'])
      const seqScan = lines.some((line) => /Seq Scan on services\b/.test(line))
      if (seqScan) failures++
      console.log(`\n== ${name}${seqScan ? '  <-- SEQ SCAN ON services' : ''}\n${query}`)
      console.log(lines.map((line) => `   ${line}`).join('\n'))
    }
  }

  const [sample] = (await pool.query<{ id: string }>(`select id from services where status = 'active' and deleted_at is null order by created_at desc limit 1`)).rows
  if (sample) await explain('one service with its category, packages, extras, seller and images', () => prepareServiceRead(db, views)(sample.id))
  await explain('category tree counts', () => createCategoriesRepository(db).countActiveServices())

  for (const { name, filter, window = { offset: 0, limit: 20 } } of HOT_PATHS) {
    const { category, fuzzy, search, ...rest } = filter
    let categoryIds: string[] | undefined
    if (category) {
      categoryIds = await repository.categoryIdsByRef(category)
      if (categoryIds.length === 0) throw new Error(`category ${category} is missing`)
    }
    const sortBy = rest.sortBy
    await explain(name, async () =>
      search !== undefined
        ? repository.searchActive({ ...rest, categoryIds, search }, window, { corrected: fuzzy ? await repository.correctedQuery(search) : null, candidateCap: 1000, views })
        : sortBy === 'relevance'
          ? Promise.reject(new Error('relevance needs a search'))
          : repository.listActive({ ...rest, sortBy, categoryIds }, window, 1000, views),
    )
  }
} finally {
  await pool.end()
}

if (failures > 0) {
  console.error(`\n${failures} plan(s) read the services table sequentially`)
  process.exit(1)
}
console.log('\nno sequential scan on services in any hot path')
