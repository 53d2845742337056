import { and, asc, desc, eq, gte, inArray, lte, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { categories, categoryServiceCounts } from './categories.table.ts'
import {
  activeLive,
  categoryColumns,
  NEAREST_WORD_MIN_SIMILARITY,
  searchRanking,
  searchWordsOf,
  type ListedService,
  type PageWindow,
  type ServiceFilter,
  type ServiceSearch,
  type ServiceViews,
} from './service-lists.repository.ts'
import { searchWords, serviceColumns, services } from './services.table.ts'

// Any list of the public catalogue, filtered, sorted and searched as asked, built for each request.

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
function cappedCount(db: Executor, conditions: SQL[], cap: number) {
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
function sortedPage(db: Executor, conditions: SQL[], sortBy: keyof typeof sortColumns, sortOrder: 'asc' | 'desc', window: PageWindow, total: SQL<number>, views: ServiceViews) {
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
function totalOf(db: Executor, filter: ServiceFilter, conditions: SQL[], cap: number): { total: SQL<number>; isExact: boolean } {
  const isExact = filter.minPriceCents === undefined && filter.maxPriceCents === undefined && !filter.sellerId && !filter.tags?.length
  if (!isExact) return { total: cappedCount(db, conditions, cap), isExact }
  const within = filter.categoryIds ? sql` where ${inArray(categoryServiceCounts.categoryId, filter.categoryIds)}` : sql``
  return { total: sql<number>`(select coalesce(sum(${categoryServiceCounts.activeServices}), 0)::int from ${categoryServiceCounts}${within})`, isExact }
}

/**
 * The search with each word replaced by its nearest words in the lexicon (or-ed, at most
 * three), as `to_tsquery` text, or null when no word has a near one. Lexicon words are
 * [a-z0-9] only, so each is a plain quoted lexeme.
 */
export async function correctedQuery(db: Executor, search: string): Promise<string | null> {
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

export function createServiceSearchRepository(db: Executor) {
  return {
    correctedQuery: (search: string) => correctedQuery(db, search),

    /**
     * A page of the public catalogue without a search, sorted on indexed columns, with up to
     * `limit + 1` rows (the extra one says there is a next page). The total comes in the same
     * statement: the kept per-category counts when only a category narrows the list (exact),
     * otherwise a count capped at `countCap + 1` rows.
     */
    async listActive(filter: ServiceSearch & { sortBy: keyof typeof sortColumns }, window: PageWindow, countCap: number, views: ServiceViews): Promise<{ rows: ListedService[]; total: number | undefined; isExact: boolean }> {
      const conditions = filtersOf(filter)
      const { total, isExact } = totalOf(db, filter, conditions, countCap)
      const rows = await sortedPage(db, conditions, filter.sortBy, filter.sortOrder, window, total, views)
      return { rows: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total, isExact }
    },

    /** The total of `listActive` when its page came back empty (past the end). */
    async countActive(filter: ServiceFilter, countCap: number): Promise<number> {
      const result: unknown = await db.execute(sql`select ${totalOf(db, filter, filtersOf(filter), countCap).total} as total`)
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
        const listed = await sortedPage(db, conditions, filter.sortBy, filter.sortOrder, window, cappedCount(db, conditions, options.candidateCap), options.views)
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
  }
}
