import type { Static } from '@sinclair/typebox'
import { sql, type AnyColumn, type Placeholder, type SQL } from 'drizzle-orm'
import { placeholdersOf } from '../../db/fragments.ts'
import { jsonObjectSql } from '../../db/json-sql.ts'
import { preparedSql } from '../../db/statements.ts'
import type { PublicFile } from '../uploads/uploads.module.ts'
import type { SellerLevel, UserSummary } from '../users/users.module.ts'
import { categories, categoryServiceCounts } from './categories.table.ts'
import { ServiceSummary } from './services.schemas.ts'
import { services } from './services.table.ts'

// The catalogue's public lists: what a list asks for, the list row every list statement builds,
// and the common lists (no search, filter or facets), one prepared statement per shape, their
// pages built as JSON by PostgreSQL.

export type ServiceSort = 'price' | 'rating' | 'createdAt' | 'relevance'

/** Which slice of a list: an offset, or the rows after a service (keyset), `limit` rows. */
export interface PageWindow {
  offset: number
  limit: number
  /** The id of the last service of the previous page: the page starts after it in the list's order. */
  after?: string
}

/** How many of a search's best candidates by `ts_rank` are ranked again with the title's word similarity. */
export const RERANKED = 100

/** Cents as the API's two-decimal number, and a timestamp as the API writes it (UTC, milliseconds), in SQL. */
export const moneySql = (cents: SQL) => sql`round(${cents} / 100.0, 2)`
export const isoSql = (timestamp: SQL) => sql`to_char(${timestamp} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** What other modules contribute to one-statement reads, as SQL (their own tables, their own code). */
export interface ServiceViews {
  sellerOf(userId: AnyColumn | SQL): SQL<UserSummary>
  levelOf(userId: AnyColumn | SQL): SQL<SellerLevel>
  /** Whether the seller in `userId` is at one of `levels` (a `text[]` expression). */
  atLevels(userId: AnyColumn | SQL, levels: SQL): SQL<boolean>
  /** A select of the ids (`id`) of the users above `new` at one of `levels` (a `text[]` expression): sellers all. */
  sellersAbove(levels: SQL): SQL
  /** A select of every user above `new` (`id`, `level`); anyone not in it is at `new`. */
  levelsAboveNew(): SQL
  bannerOf(serviceId: AnyColumn | SQL): SQL<string | null>
  galleryOf(serviceId: AnyColumn | SQL): SQL<PublicFile[]>
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

/** A service as lists show it, as every list statement builds it (JSON from PostgreSQL). */
export type ListedJson = Static<typeof ServiceSummary>

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

/**
 * A service as lists show it (`ServiceSummary`), built by PostgreSQL from the service `s` and its
 * category `c`: the one builder of a list item, whichever list sends it.
 */
export const listedJsonSql = (views: ServiceViews) =>
  jsonObjectSql(ServiceSummary, {
    id: sql`s.id`,
    title: sql`s.title`,
    shortDescription: sql`s.short_description`,
    startingPrice: moneySql(sql`s.starting_price_cents`),
    rating: jsonObjectSql(ServiceSummary.properties.rating, { average: sql`s.rating_average`, count: sql`s.rating_count` }),
    ordersCount: sql`s.orders_count`,
    banner: views.bannerOf(sql`s.id`),
    seller: views.sellerOf(sql`s.seller_id`),
    sellerLevel: views.levelOf(sql`s.seller_id`),
    category: jsonObjectSql(ServiceSummary.properties.category, { id: sql`c.id`, name: sql`c.name`, slug: sql`c.slug` }),
    createdAt: isoSql(sql`s.created_at`),
  })

/**
 * The id of the page's last item (its `limit`-th row in `order`), which the next page's cursor
 * names; null when the page is shorter. The items go to the client as the text PostgreSQL wrote.
 */
export const lastShownSql = (order: SQL, limit: SQL | Placeholder) => sql`(select page.id from page order by ${order} offset (select ${limit}::int) - 1 limit 1)`

/** A common list's placeholders: the category (by id or slug), the last row of the previous page, the offset; each where its shape reads it. */
export interface CommonListValues {
  category?: string
  after?: string
  offset?: number
  /** The page size: the items built, of the rows read (one more says there is a next page). */
  limit: number
}

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
  const placeholder = placeholdersOf<CommonListValues>()
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
  const order = sql`page.sort_value ${direction}, page.id ${direction}`
  return preparedSql<CommonListValues, { categories: number | null; total: number; items: string; read: number; lastShown: string | null }>(
    name,
    sql`with ${shape.category === 'none' ? sql`` : sql`ref as (${ref}),
      wanted as (select coalesce(array_agg(c.id), '{}') as ids from ${categories} c where c.id in (select id from ref) or c.parent_id in (select id from ref)),`}
    page as (${page})
    select ${shape.category === 'none' ? sql`null::int` : sql`(select count(*) from ref)::int`} as categories,
      (select coalesce(sum(n.active_services), 0)::int from ${categoryServiceCounts} n${within}) as total,
      coalesce((select json_agg(${listed} order by ${order})
        from (select * from page order by ${order} limit (select ${placeholder('limit')}::int)) as page
        join ${services} s on s.id = page.id join ${categories} c on c.id = s.category_id), '[]'::json)::text as items,
      (select count(*)::int from page) as read, ${lastShownSql(order, placeholder('limit'))} as "lastShown"`,
  )
}
