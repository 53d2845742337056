import type { Static } from '@sinclair/typebox'
import { and, asc, count, desc, eq, gte, inArray, isNull, lte, or, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { jsonObjectSql, JsonText } from '../../db/json-sql.ts'
import { preparedSql } from '../../db/statements.ts'
import { categories, categoryServiceCounts } from './categories.table.ts'
import type { PublicFile } from '../uploads/uploads.module.ts'
import type { UserSummary } from '../users/users.module.ts'
import { Service, ServiceListRow } from './services.schemas.ts'
import {
  searchWords,
  serviceColumns,
  serviceExtras,
  servicePackages,
  services,
  type ServiceExtraRow,
  type ServicePackageRow,
  type ServiceRow,
  type ServiceStatus,
} from './services.table.ts'

export type NewServiceRow = typeof services.$inferInsert
export type ServiceSort = 'price' | 'rating' | 'createdAt' | 'relevance'

export interface ServiceSearch {
  categoryIds?: string[]
  search?: string
  minPriceCents?: number
  maxPriceCents?: number
  sellerId?: string
  tags?: string[]
  sortBy: ServiceSort
  sortOrder: 'asc' | 'desc'
}

/** The filters of a list, without its order. */
export type ServiceFilter = Omit<ServiceSearch, 'sortBy' | 'sortOrder' | 'search'>

/** Which slice of a list: an offset, or the rows after a service (keyset), `limit` rows. */
export interface PageWindow {
  offset: number
  limit: number
  /** The id of the last service of the previous page: the page starts after it in the list's order. */
  after?: string
}

/** A list row: the service, its category, seller and banner. */
export type ListedService = ServiceRow & { category: { id: string; name: string; slug: string }; seller: UserSummary; banner: string | null }

/** How many of a search's best candidates by `ts_rank` are ranked again with the title's word similarity. */
const RERANKED = 100
/**
 * A misspelt word is replaced by its three nearest lexicon words at least this similar (trigrams):
 * low enough for `desgin` -> `design` (0.27) and `buisness` -> `business` (0.38).
 */
const NEAREST_WORD_MIN_SIMILARITY = 0.2

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const activeLive = and(eq(services.status, 'active'), isNull(services.deletedAt))!
const categoryColumns = { id: categories.id, name: categories.name, slug: categories.slug }

/** Cents as the API's two-decimal number, and a timestamp as the API writes it (UTC, milliseconds), in SQL. */
const moneySql = (cents: SQL) => sql`round(${cents} / 100.0, 2)`
const isoSql = (timestamp: SQL) => sql`to_char(${timestamp} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** What other modules contribute to one-statement reads, as SQL (their own tables, their own code). */
export interface ServiceViews {
  sellerOf(userId: AnyColumn | SQL): SQL<UserSummary>
  bannerOf(serviceId: AnyColumn | SQL): SQL<string | null>
  galleryOf(serviceId: AnyColumn | SQL): SQL<PublicFile[]>
}

/** `GET /services/{id}`'s answer. */
export type ServiceJson = Static<typeof Service>

/**
 * `GET /services/{id}` in one prepared statement: the answer's JSON text, built by PostgreSQL from
 * the response schema (`rejectionReason` null: it depends on the viewer), and what decides who
 * may see the service and its rejection reason. Prepared once per database handle: Drizzle
 * builds its SQL once, and on PostgreSQL each connection parses and plans it once (a named
 * statement).
 */
export function prepareServiceRead(db: Executor, views: ServiceViews) {
  const { category, packages, extras, rating } = Service.properties
  const answer = jsonObjectSql(Service, {
    id: services.id,
    title: services.title,
    shortDescription: services.shortDescription,
    description: services.description,
    tags: services.tags,
    status: services.status,
    rejectionReason: sql`null`,
    category: jsonObjectSql(category, { id: categories.id, name: categories.name, slug: categories.slug }),
    seller: views.sellerOf(services.sellerId),
    packages: sql`coalesce((select json_agg(${jsonObjectSql(packages.items, {
      id: sql`p.id`,
      name: sql`p.name`,
      description: sql`p.description`,
      price: moneySql(sql`p.price_cents`),
      deliveryDays: sql`p.delivery_days`,
      revisions: sql`coalesce(to_json(p.revisions), '"unlimited"'::json)`,
      features: sql`p.features`,
    })} order by p.position) from ${servicePackages} p where p.service_id = ${services.id}), '[]'::json)`,
    extras: sql`coalesce((select json_agg(${jsonObjectSql(extras.items, {
      id: sql`e.id`,
      title: sql`e.title`,
      price: moneySql(sql`e.price_cents`),
      additionalDays: sql`e.additional_days`,
    })} order by e.position) from ${serviceExtras} e where e.service_id = ${services.id}), '[]'::json)`,
    banner: views.bannerOf(services.id),
    images: views.galleryOf(services.id),
    startingPrice: moneySql(sql`${services.startingPriceCents}`),
    rating: jsonObjectSql(rating, { average: services.ratingAverage, count: services.ratingCount }),
    ordersCount: services.ordersCount,
    createdAt: isoSql(sql`${services.createdAt}`),
    updatedAt: isoSql(sql`${services.updatedAt}`),
  })
  // Rows as the driver gives them (no mapping per column): the timestamp as text.
  const statement = preparedSql<{ id: string }, { sellerId: string; status: ServiceStatus; deletedAt: string | null; rejectionReason: string | null; service: string }>(
    'catalogue_service_by_id',
    sql`select ${services.sellerId} as "sellerId", ${services.status} as status, ${services.deletedAt} as "deletedAt",
      ${services.rejectionReason} as "rejectionReason", ${answer}::text as service
      from ${services} join ${categories} on ${categories.id} = ${services.categoryId}
      where ${services.id} = ${sql.placeholder('id')}::uuid`,
  )
  return async (id: string) => {
    const [row] = await statement(db, { id })
    return (
      row && {
        sellerId: row.sellerId,
        status: row.status,
        deletedAt: row.deletedAt === null ? null : new Date(row.deletedAt),
        rejectionReason: row.rejectionReason,
        service: new JsonText<ServiceJson>(row.service),
      }
    )
  }
}

/**
 * A common list: the whole catalogue or a category (with its subcategories), in one sort; its
 * first page, a page by offset, or the page after a service (keyset); at most `rows` rows.
 */
export interface CommonListShape {
  category: 'none' | 'id' | 'slug'
  sortBy: keyof typeof sortColumnNames
  sortOrder: 'asc' | 'desc'
  paging: 'first' | 'offset' | 'keyset'
  rows: (typeof COMMON_LIST_ROWS)[number]
}

/**
 * How many rows a common list's statement reads: the page size plus one, rounded up to one of
 * these. A literal LIMIT (and OFFSET 0 on first and keyset pages) lets PostgreSQL keep one
 * generic plan that walks the sort's index; with a parameter there it cannot tell 21 rows from
 * thousands, plans a sort of the whole category, and re-plans every call instead.
 */
export const COMMON_LIST_ROWS = [21, 101] as const

/** A list row as the common lists' statement builds it (JSON from PostgreSQL). */
export type ListedJson = Static<typeof ServiceListRow>

const sortColumnNames = { price: 'starting_price_cents', rating: 'rating_average', createdAt: 'created_at' } as const

/** Every shape of common list: one statement each. */
export const commonListShapes = (): CommonListShape[] =>
  (['none', 'id', 'slug'] as const).flatMap((category) =>
    (Object.keys(sortColumnNames) as (keyof typeof sortColumnNames)[]).flatMap((sortBy) =>
      (['asc', 'desc'] as const).flatMap((sortOrder) =>
        (['first', 'offset', 'keyset'] as const).flatMap((paging) => COMMON_LIST_ROWS.map((rows) => ({ category, sortBy, sortOrder, paging, rows }))),
      ),
    ),
  )

/** A list row (`ListedJson`) built by PostgreSQL from the service `s` and its category `c`. */
const listedJsonSql = (views: ServiceViews) =>
  jsonObjectSql(ServiceListRow, {
    id: sql`s.id`,
    title: sql`s.title`,
    shortDescription: sql`s.short_description`,
    startingPriceCents: sql`s.starting_price_cents`,
    ratingAverage: sql`s.rating_average`,
    ratingCount: sql`s.rating_count`,
    ordersCount: sql`s.orders_count`,
    createdAt: isoSql(sql`s.created_at`),
    category: jsonObjectSql(ServiceListRow.properties.category, { id: sql`c.id`, name: sql`c.name`, slug: sql`c.slug` }),
    seller: views.sellerOf(sql`s.seller_id`),
    banner: views.bannerOf(sql`s.id`),
  })

/**
 * The common lists in one prepared statement each (3 category refs x 3 sorts x 2 orders x 3
 * kinds of page x 2 sizes = 108 at most): the category and its subcategories resolved in the statement, the
 * page's ids chosen by walking the sort's partial index, the page built as JSON by PostgreSQL,
 * and the exact total from the kept per-category counts. One row always comes back, so an
 * unknown category (`categories` 0) and an empty page are told apart without a second query.
 */
export function prepareCommonList(shape: CommonListShape, views: ServiceViews) {
  const columnName = sql.raw(sortColumnNames[shape.sortBy])
  const direction = sql.raw(shape.sortOrder)
  const placeholder = (name: 'category' | 'after' | 'offset') => sql.placeholder(name)
  const ref =
    shape.category === 'id' ? sql`select c.id from ${categories} c where c.id = ${placeholder('category')}::uuid` : sql`select c.id from ${categories} c where c.slug = ${placeholder('category')}::text`
  const after =
    shape.paging === 'keyset'
      ? sql` and (s.${columnName}, s.id) ${sql.raw(shape.sortOrder === 'asc' ? '>' : '<')} (select ${columnName}, id from ${services} where id = ${placeholder('after')}::uuid)`
      : sql``
  // The rows a walk must read: the page's, and the offset's before it. The offset is read in a
  // sub-select, which hides its value from the planner in every plan: a plan made for one offset
  // would then cost the same as the generic one, so PostgreSQL settles on the generic plan after
  // a few calls instead of planning each page again (decision 0126).
  const reach = shape.paging === 'offset' ? sql`(select ${placeholder('offset')}::int + ${sql.raw(String(shape.rows))})` : sql.raw(String(shape.rows))
  const offset = shape.paging === 'offset' ? sql`offset (select ${placeholder('offset')}::int) ` : sql``
  const walk = (where: SQL) => sql`select s.id, s.${columnName} as sort_value from ${services} s
      where s.status = 'active' and s.deleted_at is null${where}${after}
      order by s.${columnName} ${direction}, s.id ${direction}`
  // A category's page: the first rows of each of its (sub)categories by their own partial index,
  // then merged. Its cost is bounded by the number of subcategories, not by how many services a
  // category has: a single walk of the sort's index filtered by category reads the whole index
  // for a category with few services.
  const page =
    shape.category === 'none'
      ? sql`${walk(sql``)} ${offset}limit ${sql.raw(String(shape.rows))}`
      : sql`select x.id, x.sort_value from unnest((select ids from wanted)::uuid[]) as category(id)
      cross join lateral (${walk(sql` and s.category_id = category.id`)} limit ${reach}) as x
      order by x.sort_value ${direction}, x.id ${direction}
      ${offset}limit ${sql.raw(String(shape.rows))}`
  const within = shape.category === 'none' ? sql`` : sql` where n.category_id = any((select ids from wanted)::uuid[])`
  const listed = listedJsonSql(views)
  const name = `catalogue_list_${shape.category}_${shape.sortBy}_${shape.sortOrder}_${shape.paging}_${shape.rows}`
  return preparedSql<{ category?: string; after?: string; offset?: number }, { categories: number | null; total: number; items: ListedJson[] }>(
    name,
    sql`with ${shape.category === 'none' ? sql`` : sql`ref as (${ref}),
      wanted as (select coalesce(array_agg(c.id), '{}') as ids from ${categories} c where c.id in (select id from ref) or c.parent_id in (select id from ref)),`}
    page as (${page})
    select ${shape.category === 'none' ? sql`null::int` : sql`(select count(*) from ref)::int`} as categories,
      (select coalesce(sum(n.active_services), 0)::int from ${categoryServiceCounts} n${within}) as total,
      coalesce((select json_agg(${listed} order by page.sort_value ${direction}, page.id ${direction})
        from page join ${services} s on s.id = page.id join ${categories} c on c.id = s.category_id), '[]'::json) as items`,
  )
}

/**
 * A search by relevance, shared by every such search: the CTEs `candidates` (at most `cap + 1`
 * services of `filters` the GIN index yields for `query`, with the cheap rank, `ts_rank`) and
 * `best` (the RERANKED best of them ranked again with the title's word similarity to `search`),
 * and a page of them in the order every page of the search shares (re-ranked first, then the rest
 * by cheap rank). Columns of a page: id, reranked, rank.
 */
function searchRanking(filters: SQL, query: SQL, search: SQL, cap: number) {
  const ctes = sql`candidates as (
      select ${services.id} as id, ${services.title} as title, ts_rank(${services.searchVector}, ${query}) as cheap from ${services}
      where ${filters} and ${services.searchVector} @@ ${query}
      limit ${sql.raw(String(cap + 1))}),
    best as (
      select id, cheap + word_similarity(lower(${search}), lower(title)) as rank
      from (select id, title, cheap from candidates order by cheap desc, id desc limit ${sql.raw(String(RERANKED))}) as top)`
  const page = (offset: SQL, limit: SQL) => sql`select candidates.id, (best.id is not null) as reranked, coalesce(best.rank, candidates.cheap) as rank
      from candidates left join best on best.id = candidates.id
      order by reranked desc, rank desc, candidates.id desc
      offset ${offset} limit ${limit}`
  return { ctes, page }
}

/** The shape of a common search (a search alone, by relevance): its page and whether the corrected query joins in. */
export interface CommonSearchShape {
  paging: 'first' | 'offset'
  rows: (typeof COMMON_LIST_ROWS)[number]
  corrected: boolean
}

/** Every shape of common search: one statement each. */
export const commonSearchShapes = (): CommonSearchShape[] =>
  (['first', 'offset'] as const).flatMap((paging) => COMMON_LIST_ROWS.flatMap((rows) => [false, true].map((corrected) => ({ paging, rows, corrected }))))

/**
 * A search with no other filter, by relevance, in one prepared statement per shape (2 kinds of
 * page x 2 sizes x with or without the corrected query): the same bounded candidate set and
 * re-ranking as `searchActive`, the page built as JSON by PostgreSQL, and the candidates counted
 * (at most `cap + 1`).
 */
export function prepareCommonSearch(shape: CommonSearchShape, cap: number, views: ServiceViews) {
  const search = sql`${sql.placeholder('search')}::text`
  const typed = sql`websearch_to_tsquery('english', ${search})`
  // A sub-select, so that the query is parsed once per execution: in the generic plan a prepared
  // statement keeps, the function call itself would run again for every row it ranks or rechecks.
  const query = sql`(select ${shape.corrected ? sql`${typed} || to_tsquery('english', ${sql.placeholder('corrected')}::text)` : typed})`
  // Written out, not bound: a generic plan must see that only active, live services are wanted.
  const ranking = searchRanking(sql`${services.status} = 'active' and ${services.deletedAt} is null`, query, search, cap)
  // In a sub-select, as in the common lists: one plan serves every page.
  const offset = shape.paging === 'offset' ? sql`(select ${sql.placeholder('offset')}::int)` : sql`0`
  const listed = listedJsonSql(views)
  const name = `catalogue_search_${shape.paging}_${shape.rows}${shape.corrected ? '_corrected' : ''}`
  return preparedSql<{ search: string; corrected?: string; offset?: number }, { total: number; items: ListedJson[] }>(
    name,
    sql`with ${ranking.ctes},
    page as (${ranking.page(offset, sql.raw(String(shape.rows)))})
    select (select count(*) from candidates)::int as total,
      coalesce((select json_agg(${listed} order by page.reranked desc, page.rank desc, page.id desc)
        from page join ${services} s on s.id = page.id join ${categories} c on c.id = s.category_id), '[]'::json) as items`,
  )
}

/** Lower-case words of a search, for the misspelling lexicon (at most eight, three letters or more). */
export const searchWordsOf = (search: string): string[] =>
  [...new Set(search.toLowerCase().split(/[^a-z0-9]+/))].filter((word) => word.length >= 3 && word.length <= 40).slice(0, 8)

export function createServicesRepository(db: Executor) {
  const live = isNull(services.deletedAt)

  /** The filters of the public catalogue other than the search, as SQL conditions. */
  function filtersOf(filter: ServiceFilter): SQL[] {
    const conditions: SQL[] = [activeLive]
    if (filter.categoryIds) conditions.push(inArray(services.categoryId, filter.categoryIds))
    if (filter.minPriceCents !== undefined) conditions.push(gte(services.startingPriceCents, filter.minPriceCents))
    if (filter.maxPriceCents !== undefined) conditions.push(lte(services.startingPriceCents, filter.maxPriceCents))
    if (filter.sellerId) conditions.push(eq(services.sellerId, filter.sellerId))
    if (filter.tags && filter.tags.length > 0) conditions.push(sql`${services.tags} && ${sql`array[${sql.join(filter.tags.map((tag) => sql`${tag}`), sql`, `)}]::text[]`}`)
    return conditions
  }

  const sortColumns = {
    price: services.startingPriceCents,
    rating: services.ratingAverage,
    createdAt: services.createdAt,
  } as const

  /** The page's window in a fixed order (column, then id, both one way), by offset or after a row. */
  function keyset(sortBy: keyof typeof sortColumns, sortOrder: 'asc' | 'desc', window: PageWindow): SQL | undefined {
    if (!window.after) return undefined
    const column = sortColumns[sortBy]
    // The row's own values, read in the statement: timestamps keep their microseconds.
    const after = sql`(select ${column}, ${services.id} from ${services} where ${services.id} = ${window.after})`
    return sortOrder === 'asc' ? sql`(${column}, ${services.id}) > ${after}` : sql`(${column}, ${services.id}) < ${after}`
  }

  /** At most `cap + 1` matching rows are counted: the caller reports `cap` and "at least". */
  function cappedCount(conditions: SQL[], cap: number) {
    const capped = db
      .select({ one: sql`1`.as('one') })
      .from(services)
      .where(and(...conditions))
      .limit(cap + 1)
      .as('capped')
    return sql<number>`(select count(*)::int from ${capped})`
  }

  /**
   * A page in index order with its total. Only the page's ids are chosen by the walk (offset or
   * keyset); the seller and banner subqueries then run for those rows alone, not for every row
   * an offset skips.
   */
  function sortedPage(conditions: SQL[], sortBy: keyof typeof sortColumns, sortOrder: 'asc' | 'desc', window: PageWindow, total: SQL<number>, views: ServiceViews) {
    const direction = sortOrder === 'asc' ? asc : desc
    // The id (UUIDv7) breaks ties so pages never overlap.
    const order = [direction(sortColumns[sortBy]), direction(services.id)]
    const page = db
      .select({ id: services.id })
      .from(services)
      .where(and(...conditions, keyset(sortBy, sortOrder, window)))
      .orderBy(...order)
      .offset(window.after ? 0 : window.offset)
      .limit(window.limit + 1)
    return db
      .select({ ...serviceColumns, category: categoryColumns, seller: views.sellerOf(services.sellerId), banner: views.bannerOf(services.id), total: total.as('total') })
      .from(services)
      .innerJoin(categories, eq(categories.id, services.categoryId))
      .where(inArray(services.id, page))
      .orderBy(...order)
  }

  /**
   * The kept per-category counts when only categories narrow the list (exact), otherwise a count
   * capped at `cap + 1` rows.
   */
  function totalOf(filter: ServiceFilter, conditions: SQL[], cap: number): { total: SQL<number>; isExact: boolean } {
    const isExact = filter.minPriceCents === undefined && filter.maxPriceCents === undefined && !filter.sellerId && !filter.tags?.length
    if (!isExact) return { total: cappedCount(conditions, cap), isExact }
    const within = filter.categoryIds ? sql` where ${inArray(categoryServiceCounts.categoryId, filter.categoryIds)}` : sql``
    return { total: sql<number>`(select coalesce(sum(${categoryServiceCounts.activeServices}), 0)::int from ${categoryServiceCounts}${within})`, isExact }
  }

  /**
   * The search with each word replaced by its nearest words in the lexicon (or-ed, at most
   * three), as `to_tsquery` text, or null when no word has a near one. Lexicon words are
   * [a-z0-9] only, so each is a plain quoted lexeme.
   */
async function correctedQuery(search: string): Promise<string | null> {
    const wanted = searchWordsOf(search)
    if (wanted.length === 0) return null
    const result: unknown = await db.execute(sql`
      select string_agg(alternatives, ' & ') as query from (
        select '(' || string_agg(quote_literal(nearest.word), ' | ') || ')' as alternatives
        from unnest(array[${sql.join(
          wanted.map((word) => sql`${word}`),
          sql`, `,
        )}]::text[]) with ordinality as wanted(input, position)
        cross join lateral (
          select word from (
            select ${searchWords.word} as word, similarity(${searchWords.word}, wanted.input) as score from ${searchWords}
            order by ${searchWords.word} <-> wanted.input limit 3
          ) as closest where score >= ${NEAREST_WORD_MIN_SIMILARITY}
        ) as nearest
        group by wanted.position) as per_word`)
    return (result as { rows: { query: string | null }[] }).rows[0]?.query ?? null
  }

  return {
    correctedQuery,

    async findById(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db.select(serviceColumns).from(services).where(eq(services.id, id))
      return row
    },

    async lockById(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db.select(serviceColumns).from(services).where(and(eq(services.id, id), live)).for('update')
      return row
    },

    async insert(row: NewServiceRow): Promise<ServiceRow> {
      const [inserted] = await db.insert(services).values(row).returning(serviceColumns)
      return inserted!
    },

    async update(id: string, patch: Partial<Omit<NewServiceRow, 'id' | 'sellerId' | 'createdAt'>>): Promise<ServiceRow | undefined> {
      const [row] = await db.update(services).set(patch).where(eq(services.id, id)).returning(serviceColumns)
      return row
    },

    /** Packages and extras are replaced wholesale: their ids change on every edit. */
    async replacePackages(serviceId: string, rows: (typeof servicePackages.$inferInsert)[]): Promise<void> {
      await db.delete(servicePackages).where(eq(servicePackages.serviceId, serviceId))
      if (rows.length > 0) await db.insert(servicePackages).values(rows)
    },

    async replaceExtras(serviceId: string, rows: (typeof serviceExtras.$inferInsert)[]): Promise<void> {
      await db.delete(serviceExtras).where(eq(serviceExtras.serviceId, serviceId))
      if (rows.length > 0) await db.insert(serviceExtras).values(rows)
    },

    packagesOf(serviceIds: string[]): Promise<ServicePackageRow[]> {
      if (serviceIds.length === 0) return Promise.resolve([])
      return db.select().from(servicePackages).where(inArray(servicePackages.serviceId, serviceIds)).orderBy(asc(servicePackages.position))
    },

    extrasOf(serviceIds: string[]): Promise<ServiceExtraRow[]> {
      if (serviceIds.length === 0) return Promise.resolve([])
      return db.select().from(serviceExtras).where(inArray(serviceExtras.serviceId, serviceIds)).orderBy(asc(serviceExtras.position))
    },

    async listByStatus(status: ServiceStatus, offset: number, limit: number): Promise<{ rows: ServiceRow[]; total: number }> {
      const where = and(eq(services.status, status), live)
      const [rows, [counted]] = await Promise.all([
        db.select(serviceColumns).from(services).where(where).orderBy(asc(services.createdAt), asc(services.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(services).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /**
     * A page of the public catalogue without a search, sorted on indexed columns, with up to
     * `limit + 1` rows (the extra one says there is a next page). The total comes in the same
     * statement: the kept per-category counts when only a category narrows the list (exact),
     * otherwise a count capped at `countCap + 1` rows.
     */
    async listActive(filter: ServiceSearch & { sortBy: keyof typeof sortColumns }, window: PageWindow, countCap: number, views: ServiceViews): Promise<{ rows: ListedService[]; total: number | undefined; isExact: boolean }> {
      const conditions = filtersOf(filter)
      const { total, isExact } = totalOf(filter, conditions, countCap)
      const rows = await sortedPage(conditions, filter.sortBy, filter.sortOrder, window, total, views)
      return { rows: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total, isExact }
    },

    /** The total of `listActive` when its page came back empty (past the end). */
    async countActive(filter: ServiceFilter, countCap: number): Promise<number> {
      const result: unknown = await db.execute(sql`select ${totalOf(filter, filtersOf(filter), countCap).total} as total`)
      return Number((result as { rows: { total: number }[] }).rows[0]?.total ?? 0)
    },

    /**
     * A search. Full text (the GIN index on `search_vector`) finds the candidates; with
     * `corrected`, the search also matches with each word replaced by its nearest words in the
     * lexicon of title and tag words (`correctedQuery`). Relevance ranks at most `candidateCap` candidates, the first the
     * index yields (`ts_rank` plus the title's word similarity); other sorts use their index.
     * Page and total (capped at `candidateCap`) come from one statement.
     */
    async searchActive(
      filter: ServiceSearch & { search: string },
      window: PageWindow,
      options: { corrected: string | null; candidateCap: number; views: ServiceViews },
    ): Promise<{ rows: ListedService[]; total: number | undefined; hasMore: boolean }> {
      const typed = sql`websearch_to_tsquery('english', ${filter.search})`
      // The corrected query (`correctedQuery`) is read before, in its own small statement, so that
      // the search's planner sees a constant it can look up in the GIN index.
      const query = options.corrected === null ? typed : sql`(${typed} || to_tsquery('english', ${options.corrected}))`
      const matches = sql`${services.searchVector} @@ ${query}`
      const conditions = [...filtersOf(filter), matches]

      if (filter.sortBy !== 'relevance') {
        const listed = await sortedPage(conditions, filter.sortBy, filter.sortOrder, window, cappedCount(conditions, options.candidateCap), options.views)
        return { rows: listed.map(({ total: _total, ...row }) => row), total: listed[0]?.total, hasMore: listed.length > window.limit }
      }

      const ranking = searchRanking(and(...filtersOf(filter))!, query, sql`${filter.search}`, options.candidateCap)
      const ranked = sql`(
        with ${ranking.ctes}
        select page.*, (select count(*)::int from candidates) as total from (${ranking.page(sql`${window.offset}`, sql`${window.limit + 1}`)}) as page
      ) as ranked`
      const rows = await db
        .select({ ...serviceColumns, category: categoryColumns, seller: options.views.sellerOf(services.sellerId), banner: options.views.bannerOf(services.id), total: sql<number>`ranked.total` })
        .from(ranked)
        .innerJoin(services, sql`${services.id} = ranked.id`)
        .innerJoin(categories, eq(categories.id, services.categoryId))
        .orderBy(sql`ranked.reranked desc, ranked.rank desc, ${services.id} desc`)
      return { rows: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total, hasMore: rows.length > window.limit }
    },

    /** Services that are not soft-deleted, per seller, in one grouped query. */
    async countBySellers(sellerIds: string[]): Promise<Map<string, number>> {
      if (sellerIds.length === 0) return new Map()
      const rows = await db
        .select({ sellerId: services.sellerId, total: count() })
        .from(services)
        .where(and(inArray(services.sellerId, sellerIds), live))
        .groupBy(services.sellerId)
      return new Map(rows.map((row) => [row.sellerId, row.total]))
    },

    // Categories, read for the services' own use cases (this module owns both tables): the
    // category a service names, the ids a list filters on, and the categories of a page.
    async findCategory(idOrSlug: string) {
      const [row] = await db
        .select({ id: categories.id, name: categories.name, slug: categories.slug })
        .from(categories)
        .where(UUID.test(idOrSlug) ? eq(categories.id, idOrSlug) : eq(categories.slug, idOrSlug))
      return row
    },

    /** The ids of a category (by id or slug) and its subcategories in one statement; empty when unknown. */
    async categoryIdsByRef(idOrSlug: string): Promise<string[]> {
      const target = db
        .select({ id: categories.id })
        .from(categories)
        .where(UUID.test(idOrSlug) ? eq(categories.id, idOrSlug) : eq(categories.slug, idOrSlug))
      const rows = await db
        .select({ id: categories.id })
        .from(categories)
        .where(or(inArray(categories.id, target), inArray(categories.parentId, target)))
      return rows.map((row) => row.id)
    },

    categoriesByIds(ids: string[]) {
      if (ids.length === 0) return Promise.resolve([])
      return db.select({ id: categories.id, name: categories.name, slug: categories.slug }).from(categories).where(inArray(categories.id, ids))
    },

  }
}

export type ServicesRepository = ReturnType<typeof createServicesRepository>
