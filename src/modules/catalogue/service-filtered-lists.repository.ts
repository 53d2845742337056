import { sql, type SQL } from 'drizzle-orm'
import { placeholdersOf } from '../../db/fragments.ts'
import { preparedSql } from '../../db/statements.ts'
import { categories, categoryServiceCounts } from './categories.table.ts'
import { facetsSql, sampleCteSql, type FacetFilter, type FacetSets } from './service-facets.repository.ts'
import { COMMON_LIST_ROWS, lastShownSql, listedJsonSql, RERANKED, type ServiceViews } from './service-lists.repository.ts'
import { services } from './services.table.ts'

// Lists with filters, and searches: one prepared statement per shape, every filter a placeholder
// that is null when the list does not use it (decision 0209). A search corrects its misspelt
// words in the same statement when it finds too little (decision 0208), and the facets are
// counted in the same statement (decision 0207).

/**
 * A filtered list or search: the whole catalogue or a category (by id or slug), its order, how
 * many rows it reads, whether it counts facets, and whether a seller, tags or words narrow a
 * sorted list (such a list is planned for its values on every call: the index that finds its
 * rows depends on them).
 */
export interface FilteredListShape {
  category: 'none' | 'ref'
  sortBy: 'createdAt' | 'price' | 'rating' | 'relevance'
  /** Always `desc` by relevance. */
  sortOrder: 'asc' | 'desc'
  rows: (typeof COMMON_LIST_ROWS)[number]
  /** Always false by relevance: a search's candidates come from its words' index whatever else narrows it. */
  narrowed: boolean
  /**
   * A sorted list narrowed by tags alone (no seller, no words, no facets), run by name: its page
   * comes from the tags' index when they match at most the cap, from the sort's index otherwise,
   * decided in the statement by the count (decision 0230). Never with `narrowed`.
   */
  tagged: boolean
  facets: boolean
  /** How a sorted list run by name (not narrowed, not tagged) reads its page: `walk` for every other list. */
  reads: PageReading
}

/**
 * How a sorted list run by name finds its page, decided from its values before it runs
 * (`pageReadingOf`), each a statement of its own (decision 0238):
 * - `walk`: the sort's index walked from where the page starts, every filter checked on the way;
 * - `rating`: a lowest rating is the list's only filter (whole catalogue): the walk checks the
 *   rating alone, the total counts from the rating index (decision 0234);
 * - `sellers`: the list narrows to the sellers online, or to sellers at levels above `new` (no
 *   facets): their services first, seller by seller (decision 0235);
 * - `days`: a longest delivery time narrows the whole catalogue, with no price or rating bound
 *   and no sellers to read first (no facets): when at most the cap of services match, they are
 *   read first from the delivery index and the page sorted from them; otherwise the sort's index
 *   is walked (decision 0244). A price or rating bound counts from its own index, and a category
 *   walks its own: reading the delivery index first would read far when those keep few.
 * - `daysAtLevels`: the same, with seller levels that include `new` (decision 0247): `days`
 *   statements hold no level check at all, whose sub-selects every execution prepares, used or not.
 * A search by relevance reads its candidates from its words' index: `words` when no filter
 * narrows it beside a category (`searchReadingOf`), the candidates then checked for nothing else;
 * `walk` when filters do, each checked on every candidate.
 */
export type PageReading = 'walk' | 'rating' | 'sellers' | 'days' | 'daysAtLevels' | 'words'

/** The values of a filtered list's statement: null where a filter is not used; lists of values comma-separated. */
export interface FilteredListValues {
  category: string | null
  search: string | null
  minPriceCents: number | null
  maxPriceCents: number | null
  deliveryDays: number | null
  minRating: number | null
  levels: string | null
  /** The sellers online now; an empty string when none is. */
  online: string | null
  sellerId: string | null
  tags: string | null
  /** The last service of the previous page (keyset); null on a first page or a page by offset. */
  after: string | null
  offset: number
  /** The page size: the items built, of the rows read (one more says there is a next page). */
  limit: number
}

export interface FilteredListRow {
  /** How many categories the reference names (0: unknown); null without a category. */
  categories: number | null
  /** Matches, counted up to `cap + 1` unless they are the kept counts. */
  total: number
  exact: boolean
  /** The page's first `limit` rows, as the JSON text of their array (`ListedJson[]`). */
  items: string
  /** The id of the page's last item when it holds `limit` (the next page's cursor names it). */
  lastShown: string | null
  /** How many rows the page read: more than `limit` when there is a next page. */
  read: number
  /** The JSON text of the counts beside the page (`FacetsJson`), when asked for. */
  facets: string | null
}

const sorts = ['createdAt', 'price', 'rating'] as const

/** The ways a sorted list run by name can read its page, in a category or not, with facets or not. */
const readingsFor = (category: FilteredListShape['category'], facets: boolean): PageReading[] => [
  'walk',
  ...(category === 'none' ? (['rating'] as const) : []),
  ...(facets ? [] : (['sellers'] as const)),
  ...(category === 'none' && !facets ? (['days', 'daysAtLevels'] as const) : []),
]

/**
 * How a sorted list run by name (not narrowed, not tagged) reads its page, from its values (null
 * where a filter is unused): the one place that decides it.
 */
export function pageReadingOf(shape: Pick<FilteredListShape, 'category' | 'facets'>, value: Pick<FilteredListValues, 'minPriceCents' | 'maxPriceCents' | 'deliveryDays' | 'minRating' | 'levels' | 'online'>): PageReading {
  const { minPriceCents, maxPriceCents, deliveryDays, minRating, levels, online } = value
  const readings = readingsFor(shape.category, shape.facets)
  const ratingAlone = minRating !== null && minPriceCents === null && maxPriceCents === null && deliveryDays === null && levels === null && online === null
  if (ratingAlone && readings.includes('rating')) return 'rating'
  const someSellers = online !== null || (levels !== null && !levels.split(',').includes('new'))
  if (someSellers && readings.includes('sellers')) return 'sellers'
  const daysAlone = deliveryDays !== null && minPriceCents === null && maxPriceCents === null && minRating === null
  if (!daysAlone || !readings.includes('days')) return 'walk'
  return levels === null ? 'days' : 'daysAtLevels'
}

/** How a search by relevance reads its candidates, from its values: `words` when no filter is used. */
export function searchReadingOf(value: Pick<FilteredListValues, 'minPriceCents' | 'maxPriceCents' | 'deliveryDays' | 'minRating' | 'levels' | 'online' | 'sellerId' | 'tags'>): PageReading {
  const { minPriceCents, maxPriceCents, deliveryDays, minRating, levels, online, sellerId, tags } = value
  return [minPriceCents, maxPriceCents, deliveryDays, minRating, levels, online, sellerId, tags].every((filter) => filter === null) ? 'words' : 'walk'
}

/** Every shape: one statement each. */
export const filteredListShapes = (): FilteredListShape[] =>
  (['none', 'ref'] as const).flatMap((category) =>
    COMMON_LIST_ROWS.flatMap((rows) =>
      [false, true].flatMap((facets) => [
        ...sorts.flatMap((sortBy) =>
          (['asc', 'desc'] as const).flatMap((sortOrder) => [
            ...readingsFor(category, facets).map((reads) => ({ category, sortBy, sortOrder, rows, narrowed: false, tagged: false, facets, reads })),
            { category, sortBy, sortOrder, rows, narrowed: true, tagged: false, facets, reads: 'walk' as const },
            ...(facets ? [] : [{ category, sortBy, sortOrder, rows, narrowed: false, tagged: true, facets, reads: 'walk' as const }]),
          ]),
        ),
        ...(['walk', 'words'] as const).map((reads) => ({ category, sortBy: 'relevance', sortOrder: 'desc', rows, narrowed: false, tagged: false, facets, reads }) as const),
      ]),
    ),
  )

export function prepareFilteredList(shape: FilteredListShape, cap: number, views: ServiceViews) {
  const { sortBy } = shape
  const name =
    sortBy === 'relevance'
      ? `catalogue_search_${shape.category}_${shape.rows}${shape.reads === 'words' ? '_words' : ''}${shape.facets ? '_facets' : ''}`
      : `catalogue_filtered_${shape.category}_${sortBy}_${shape.sortOrder}_${shape.rows}${shape.narrowed ? '_narrowed' : ''}${shape.tagged ? '_tagged' : ''}${shape.reads === 'walk' ? '' : `_${shape.reads}`}${shape.facets ? '_facets' : ''}`
  const statement = sortBy === 'relevance' ? searchSql(shape, cap, views) : sortedSql({ ...shape, sortBy }, cap, views)
  return preparedSql<FilteredListValues, FilteredListRow>(name, statement)
}

const p = placeholdersOf<FilteredListValues>()

/** Each value a statement reads, its placeholder and type. */
const given = {
  category: sql`${p('category')}::text`,
  search: sql`${p('search')}::text`,
  minPrice: sql`${p('minPriceCents')}::int`,
  maxPrice: sql`${p('maxPriceCents')}::int`,
  deliveryDays: sql`${p('deliveryDays')}::int`,
  minRating: sql`${p('minRating')}::float8`,
  levels: sql`${p('levels')}::text`,
  online: sql`${p('online')}::text`,
  sellerId: sql`${p('sellerId')}::uuid`,
  tags: sql`${p('tags')}::text`,
}
type ValueName = keyof typeof given

/**
 * How a statement reads its values. A statement run by name reads each as a column of `given g`,
 * the one row of a materialised CTE: PostgreSQL then sees no value in any plan, so a plan made for
 * some values costs what the generic plan costs, and it settles on the generic plan instead of
 * planning every call again (as the page offsets do, decision 0126). Each part of the statement
 * that reads values runs once for that row (`onGiven`, `fromGiven`), so a value read in many
 * places costs no node of its own (decision 0229). A statement planned for its values on every
 * call (narrowed) reads them directly, so that the planner folds the filters a list does not use.
 */
type Values = Record<ValueName, () => SQL>
const valuesOf = (hidden: boolean): Values =>
  Object.fromEntries(Object.keys(given).map((name) => [name, () => (hidden ? sql`g.${sql.identifier(name)}` : given[name as ValueName])])) as Values

/** The CTE of a statement's values, when it reads them through one. */
const givenCte = (hidden: boolean) =>
  hidden ? sql`given as materialized (select ${sql.join(Object.entries(given).map(([name, placeholder]) => sql`${placeholder} as ${sql.identifier(name)}`), sql`, `)}),` : sql``

/** `query`, with the values of `given` in reach when the statement reads them through it (its rows, as `query` yields them). */
const onGiven = (hidden: boolean, query: SQL) => (hidden ? sql`select q.* from given g cross join lateral (${query}) as q` : query)
/** The FROM of a select that has none, with the values of `given` in reach when the statement reads them through it. */
const fromGiven = (hidden: boolean) => (hidden ? sql` from given g` : sql``)

/** The filters the facets are about, left out of their pools. */
const FACET_FILTERS: FacetFilter[] = ['price', 'delivery', 'level']

/** What a statement's conditions hold, beside the service being active and live. */
interface Scope {
  views: ServiceViews
  value: Values
  /** A seller and tags: only in statements planned for their values (and in searches). */
  selective: boolean
  /** The price bounds are written where the price index can use them (a list by price), not with the other filters. */
  priceApart: boolean
}

/** The seller-level filter on the service `s`, true when the list does not use it. */
const levelFilterOf = (views: ServiceViews, value: Values) =>
  sql`(${value.levels()} is null or ${views.atLevels(sql`s.seller_id`, sql`(select string_to_array(${value.levels()}, ','))::text[]`)})`

/**
 * The filters on the service `s`, each true when its value is null, but those `except` names.
 * They are one expression to the planner (`coalesce(..., false)`), which it takes to keep half the
 * rows whatever the values: a generic plan then walks the sort's index and checks them on the way,
 * the plan every list filtered by price, delivery, rating, level or presence wants (a filter that
 * keeps almost nothing walks far, in this plan as in one made for its values). Lists of values are
 * split once per execution (a sub-select), not once per row; sellers online are matched through a
 * hashed sub-select.
 */
function filtersOf(scope: Scope, except: FacetFilter[] = []): SQL {
  const { minPrice, maxPrice, deliveryDays, minRating, online, sellerId, tags } = scope.value
  const parts: [FacetFilter | 'other', SQL][] = [
    ['price', sql`(${minPrice()} is null or s.starting_price_cents >= ${minPrice()}) and (${maxPrice()} is null or s.starting_price_cents <= ${maxPrice()})`],
    ['delivery', sql`(${deliveryDays()} is null or s.starting_delivery_days <= ${deliveryDays()})`],
    ['level', levelFilterOf(scope.views, scope.value)],
    ['other', sql`(${minRating()} is null or s.rating_average >= ${minRating()})`],
    ['other', sql`(${online()} is null or s.seller_id in (select unnest(string_to_array(${online()}, ',')::uuid[])))`],
  ]
  const kept = parts.filter(([name]) => !(except as string[]).includes(name) && !(name === 'price' && scope.priceApart)).map(([, condition]) => condition)
  const selective = scope.selective ? sql` and (${sellerId()} is null or s.seller_id = ${sellerId()}) and (${tags()} is null or s.tags && string_to_array(${tags()}, ','))` : sql``
  // Nobody online is a constant the executor checks before it reads a row.
  return sql`s.status = 'active' and s.deleted_at is null and (${online()} is null or ${online()} <> '') and coalesce(${sql.join(kept, sql` and `)}, false)${selective}`
}

/** True when every one of `names` is unused (null): a condition on the values alone, decided once per execution. */
const unusedOf = (value: Values, names: ValueName[]) =>
  sql`(${sql.join(
    names.map((name) => sql`${value[name]()} is null`),
    sql` and `,
  )})`

/**
 * True when a lowest rating is the list's only filter: what the `rating` statements are chosen
 * for. Their parts check the rating alone: every other filter's "unused or met" check, which a
 * generic plan runs on every row it reads, costs a list of the most common filter about as much
 * as the rating check itself (decision 0234). Their page is gated by it (a condition on the values
 * alone, decided once per execution), so that values it was not chosen for read no rows.
 */
const ratingOnlyOf = (value: Values) => sql`(${value.minRating()} is not null and ${unusedOf(value, ['minPrice', 'maxPrice', 'deliveryDays', 'levels', 'online'])})`
/** The conditions of a list filtered by a lowest rating alone. */
const ratedOnly = (value: Values) => sql`s.status = 'active' and s.deleted_at is null and s.rating_average >= ${value.minRating()}`

/**
 * The conditions of a list the `days` statements are chosen for: a delivery time, nothing else
 * (`daysAtLevels`: and seller levels). Their reads check those alone (the other filters' checks
 * cost a list about as much as its own, decision 0234), gated by the others being unused, decided
 * once per execution, so that values they were not chosen for read no rows.
 */
const daysOnlyOf = (views: ServiceViews, value: Values, atLevels: boolean) => ({
  gate: unusedOf(value, ['minPrice', 'maxPrice', 'minRating', 'online', ...(atLevels ? [] : (['levels'] as const))]),
  within: sql`s.status = 'active' and s.deleted_at is null and s.starting_delivery_days <= ${value.deliveryDays()}${atLevels ? sql` and ${levelFilterOf(views, value)}` : sql``}`,
})
type DaysOnly = ReturnType<typeof daysOnlyOf>
const withinDaysOnly = ({ gate, within }: DaysOnly) => sql`${gate} and ${within}`

/** True when no filter and no search narrows the list (a category may): the values of a shape's statement. */
const plainOf = (value: Values, selective: boolean) =>
  unusedOf(value, ['minPrice', 'maxPrice', 'deliveryDays', 'minRating', 'levels', 'online', ...(selective ? (['sellerId', 'tags', 'search'] as const) : [])])

const inCategory = sql`s.category_id = any((select ids from wanted)::uuid[])`
/** The columns the facets count, beside the id. */
const facetColumns = sql`s.category_id, s.starting_price_cents, s.starting_delivery_days, s.seller_id`
const capped = (cap: number) => sql.raw(String(cap + 1))
const literal = (rows: number) => sql.raw(String(rows))

/** The category (by id or slug) and its subcategories. */
const categoryCtes = (value: Values, hidden: boolean) => sql`ref as (${onGiven(hidden, sql`select c.id from ${categories} c where c.slug = ${value.category()} or c.id::text = lower(${value.category()})`)}),
    wanted as (select coalesce(array_agg(c.id), '{}') as ids from ${categories} c where c.id in (select id from ref) or c.parent_id in (select id from ref)),`

/** Whether the list uses none of the facets' filters. */
const facetFiltersUnused = (value: Values) => unusedOf(value, ['minPrice', 'maxPrice', 'deliveryDays', 'levels'])

/** Each facet filter on a pool's row `x`, true when the list does not use it. */
const accepts = (value: Values): Record<FacetFilter, SQL> => ({
  price: sql`(${value.minPrice()} is null or x.starting_price_cents >= ${value.minPrice()}) and (${value.maxPrice()} is null or x.starting_price_cents <= ${value.maxPrice()})`,
  delivery: sql`(${value.deliveryDays()} is null or x.starting_delivery_days <= ${value.deliveryDays()})`,
  level: sql`(${value.levels()} is null or x.level = any((select string_to_array(${value.levels()}, ','))::text[]))`,
})

/**
 * The facets' pools (decision 0207): `pool`, the list's first matches without the facets'
 * filters, and `pool_all`, the same without the category (a list without one counts `pool`
 * twice). `matching` builds the matches without the facets' filters, with or without the category;
 * `own`, when given, names the CTE of the list's own matches, which are the pool as they are (a
 * statement chosen only for values that use none of the facets' filters).
 */
function poolsSql(views: ServiceViews, hidden: boolean, hasCategory: boolean, matching: (withCategory: boolean) => SQL, cap: number, own?: string) {
  const from = hidden ? sql`given g cross join lateral` : sql``
  const pool = own === undefined ? sql`${from} (${matching(hasCategory)})` : sql.identifier(own)
  return sql`pool as (select ${facetColumns} from ${pool} as s),
    ${sampleCteSql('pool', 'sample', cap, views.levelsAboveNew())},
    ${hasCategory ? sql`pool_all as (select ${facetColumns} from ${from} (${matching(false)}) as s), ${sampleCteSql('pool_all', 'sample_all', cap, views.levelsAboveNew())},` : sql``}`
}

const facetSetsOf = (value: Values, hasCategory: boolean, plain: SQL, cap: number, filtersUnused: boolean): FacetSets => ({
  pool: 'pool',
  poolAll: hasCategory ? 'pool_all' : 'pool',
  sample: 'sample',
  sampleAll: hasCategory ? 'sample_all' : 'sample',
  plain,
  cap,
  accepts: filtersUnused ? null : accepts(value),
})

/**
 * The page's first `limit` items, in its order, as the JSON text PostgreSQL builds (the row past
 * them only says that a next page exists), and the id of the last of them: two columns.
 */
const itemsSql = (views: ServiceViews, order: SQL) =>
  sql`coalesce((select json_agg(${listedJsonSql(views)} order by ${order}) from (select * from page order by ${order} limit (select ${p('limit')}::int)) as page
      join ${services} s on s.id = page.id join ${categories} c on c.id = s.category_id), '[]'::json)::text as items, ${lastShownSql(order, p('limit'))} as "lastShown"`

/** What every statement of the family selects: the category check, the total, the page, the facets. */
function selectSql(shape: FilteredListShape, parts: { value: Values; hidden: boolean; exact: SQL; items: SQL; plain: SQL; cap: number }) {
  // A search that reads its words alone is chosen only when no filter is used (its gate reads nothing otherwise).
  const facets = shape.facets ? facetsSql(facetSetsOf(parts.value, shape.category === 'ref', parts.plain, parts.cap, shape.reads === 'words')) : sql`null::json`
  return sql`select ${shape.category === 'none' ? sql`null::int` : sql`(select count(*) from ref)::int`} as categories, (select total from counted) as total, ${parts.exact} as exact,
      ${parts.items}, (select count(*)::int from page) as read, (${facets})::text as facets${fromGiven(parts.hidden)}`
}

const sortColumnNames = { price: 'starting_price_cents', rating: 'rating_average', createdAt: 'created_at' } as const
/** Beyond every value of the rating and date columns, one way and the other: where a first page starts. */
const sentinels = {
  rating: { asc: "'-Infinity'::float8", desc: "'Infinity'::float8" },
  createdAt: { asc: "'-infinity'::timestamptz", desc: "'infinity'::timestamptz" },
} as const
const firstIds = { asc: "'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid", desc: "'00000000-0000-0000-0000-000000000000'::uuid" } as const
const INT_MAX = 2147483647

/**
 * The CTEs `typed` (the search's words as typed), `fix` (their correction, decided in the
 * statement: only when fewer than three services match as typed, `probe` counting them) and
 * `query` (what the list matches: the words as typed, or-ed with their correction when there is
 * one).
 */
const searchCtes = (value: Values, hidden: boolean, probe: SQL) => sql`typed as (select websearch_to_tsquery('english', ${value.search()}) as q${fromGiven(hidden)}),
    fix as (select catalogue_search_correction(${value.search()}) as q${fromGiven(hidden)} where ${probe} < 3),
    query as (select coalesce((select q from typed) || (select q from fix), (select q from typed)) as q),`

/**
 * Where a page starts in the sort's index: after the cursor's row, or before every row (by price:
 * at the lowest price asked for, or the highest when descending, so the walk skips nothing).
 */
function startSql(value: Values, hidden: boolean, sortBy: (typeof sorts)[number], sortOrder: 'asc' | 'desc'): SQL {
  const after = hidden ? sql`(select ${p('after')}::uuid)` : sql`${p('after')}::uuid`
  const column = sql.raw(sortColumnNames[sortBy])
  const first =
    sortBy !== 'price'
      ? sql.raw(sentinels[sortBy][sortOrder])
      : sortOrder === 'asc'
        ? sql`coalesce(${value.minPrice()}, 0) - 1`
        : sql`coalesce(${value.maxPrice()}, ${literal(INT_MAX - 1)}) + 1`
  return sql`start as (select coalesce((select s.${column} from ${services} s where s.id = ${after}), ${first}) as value,
      coalesce(${after}, ${sql.raw(firstIds[sortOrder])}) as id${fromGiven(hidden)}),`
}

/**
 * The services of the sellers a list narrows to, first (decision 0235), in the `sellers`
 * statements: the sellers online when it asks for them, else the sellers at the levels it asks for
 * (`new` not among them: users above `new` are sellers, and few). `by_seller` holds those sellers'
 * services that match the list (`where`), read seller by seller from the sellers' index, at most
 * the cap + 1, and `by_seller_count` their number. That number is the list's total; when it is all
 * of them (`all`), the page is sorted from them, as a list narrowed by tags is (decision 0230).
 * Walking the sort's index instead reads the whole catalogue to find a page when those sellers
 * are few.
 */
function sellersFirst(value: Values, views: ServiceViews, column: SQL, where: SQL, cap: number) {
  const online = value.online()
  const levels = sql`string_to_array(${value.levels()}, ',')`
  const byLevel = sql`${online} is null and ${value.levels()} is not null and not ('new' = any(${levels}))`
  const sellers = sql`select distinct unnest(string_to_array(${online}, ',')::uuid[]) as id where ${online} is not null
      union all select ranked.id from (${views.sellersAbove(levels)}) as ranked where ${byLevel}`
  // Each seller's services in a lateral sub-select with a limit of its own, which PostgreSQL cannot
  // fold into a join: always through the sellers' index, whatever it estimates of the filters (a
  // join may hash the sellers and read the catalogue's index, as many rows as it holds).
  const ctes = sql`by_seller as (select q.* from given g cross join lateral (select x.id, x.sort_value from (${sellers}) as seller
      cross join lateral (select s.id, s.${column} as sort_value from ${services} s where s.seller_id = seller.id and ${where} limit ${capped(cap)}) as x
      limit ${capped(cap)}) as q),
    by_seller_count as (select count(*)::int as n from by_seller),`
  return { from: 'by_seller' as const, ctes, all: sql`((select n from by_seller_count) <= ${literal(cap)})`, total: sql`(select n from by_seller_count)` }
}

/**
 * The services that deliver within the days asked, first, in the `days` statements (decision
 * 0244): `days_count` counts the list's matches (`days`: its delivery time, and its levels in the
 * `daysAtLevels` statements) from the delivery index, index-only, up to the cap + 1, behind the
 * gate on the other values: the list's total. When that is all of them (`all`),
 * `days_first` reads them from the same index and the page is sorted from them; when there are
 * more, the page is walked from the sort's index, as any list's is (dense enough to find a page
 * soon), and `days_first` reads nothing. Walking when few deliver that fast reads the whole
 * catalogue to find a page, and again to count it.
 */
function daysFirst(column: SQL, days: DaysOnly, cap: number) {
  // Ordered by the delivery time, so that the plan reads the delivery index whatever it estimates of the value.
  const matches = (columns: SQL, where: SQL) => sql`select ${columns} from ${services} s where ${where} order by s.starting_delivery_days limit ${capped(cap)}`
  const all = sql`((select n from days_count) <= ${literal(cap)})`
  // Counted in a sub-select of the values' row, behind their gate: no node between the count and
  // the index (a lateral join and the gate's check would each pass every row counted on).
  const ctes = sql`days_count as (select case when ${days.gate} then (select count(*)::int from (${matches(sql`s.id`, days.within)}) as counted) else 0 end as n from given g),
    days_first as (${onGiven(true, matches(sql`s.id, s.${column} as sort_value`, sql`${all} and ${withinDaysOnly(days)}`))}),`
  return { from: 'days_first' as const, ctes, all, total: sql`(select n from days_count)` }
}

/**
 * A list in one of the sorts, with any filters (and, narrowed, a seller, tags or a search): the
 * page by walking the sort's index from where it starts, the total capped, and the facets' sets
 * in the list's order. Tagged, the tags' matches first (at most the cap + 1, from their index):
 * when that is all of them, the page is sorted from them; when there are more, it is walked from
 * the sort's index as any list is, the tags checked on the way (dense enough to find a page soon).
 */
function sortedSql(shape: FilteredListShape & { sortBy: (typeof sorts)[number] }, cap: number, views: ServiceViews): SQL {
  const column = sql.raw(sortColumnNames[shape.sortBy])
  const direction = sql.raw(shape.sortOrder)
  const hasCategory = shape.category === 'ref'
  const byPrice = shape.sortBy === 'price'
  const hidden = !shape.narrowed
  const value = valuesOf(hidden)
  const scope = (except: FacetFilter[]): Scope => ({ views, value, selective: shape.narrowed, priceApart: byPrice && !except.includes('price') })
  const searched = shape.narrowed ? sql` and (${value.search()} is null or s.search_vector @@ (select q from query))` : sql``
  // By price, the bounds are conditions on the index the list walks.
  const bounds = (except: FacetFilter[]) =>
    byPrice && !except.includes('price') ? sql` and s.starting_price_cents >= coalesce(${value.minPrice()}, -1) and s.starting_price_cents <= coalesce(${value.maxPrice()}, ${literal(INT_MAX)})` : sql``
  // The tags as a filter on the sort's walk: in an expression their index cannot take, so that
  // the generic plan walks the sort's index (it is used only when many services carry them).
  const tags = shape.tagged ? sql` and coalesce(s.tags && string_to_array(${value.tags()}, ','), false)` : sql``
  const conditions = (except: FacetFilter[] = [], withCategory = hasCategory, tagged = tags) =>
    sql`${filtersOf(scope(except), except)}${bounds(except)}${searched}${tagged}${withCategory ? sql` and ${inCategory}` : sql``}`
  const order = sql`order by s.${column} ${direction}, s.id ${direction}`
  const walk = (where: SQL, limit: SQL) => sql`select s.id, s.${column} as sort_value, ${facetColumns} from ${services} s where ${where} ${order} limit ${limit}`
  // A category's rows: the first of each of its (sub)categories by their own index, merged
  // (decision 0084), so that a small category does not walk the whole catalogue's index.
  const perCategory = (where: SQL, reach: SQL) => sql`select x.* from ${hidden ? sql`given g cross join ` : sql``}unnest((select ids from wanted)::uuid[]) as category(id)
      cross join lateral (${walk(sql`${where} and s.category_id = category.id`, reach)}) as x`
  const merged = sql`order by x.sort_value ${direction}, x.id ${direction}`
  // A row with this sort value and id comes after where the page starts.
  const after = (sortValue: SQL, id: SQL) => sql`(${sortValue}, ${id}) ${sql.raw(shape.sortOrder === 'asc' ? '>' : '<')} ((select value from start), (select id from start))`
  const startsAt = sql` and ${after(sql`s.${column}`, sql`s.id`)}`
  const offset = sql`offset (select ${p('offset')}::int)`
  const rows = literal(shape.rows)
  // A list of the whole catalogue filtered by a lowest rating alone walks with that check alone.
  const rated = shape.reads === 'rating'
  const daysOnly = shape.reads === 'days' || shape.reads === 'daysAtLevels' ? daysOnlyOf(views, value, shape.reads === 'daysAtLevels') : undefined
  const wholeCatalogue = (where: SQL) => walk(sql`${where}${startsAt}`, sql`${rows} ${offset}`)
  const page = hasCategory
    ? sql`${perCategory(sql`${conditions([], false)}${startsAt}`, sql`(select ${p('offset')}::int + ${rows})`)} ${merged} ${offset} limit ${rows}`
    : onGiven(hidden, wholeCatalogue(rated ? sql`${ratingOnlyOf(value)} and ${ratedOnly(value)}${bounds([])}` : daysOnly ? withinDaysOnly(daysOnly) : conditions()))
  const taggedCte = sql`tagged as (${onGiven(
    hidden,
    sql`select s.id, s.${column} as sort_value from ${services} s where s.tags && string_to_array(${value.tags()}, ',') and ${conditions([], hasCategory, sql``)} limit ${capped(cap)}`,
  )}),
    tagged_count as (select count(*)::int as n from tagged),`
  // Without facets, the page's id and sort value are all that is read of it.
  const allTagged = sql`((select n from tagged_count) <= ${literal(cap)})`
  // The page sorted from the matches read first (`from`) when they are all of them, walked otherwise.
  const firstThenWalk = (from: 'tagged' | 'by_seller' | 'days_first', all: SQL) => sql`(select t.id, t.sort_value from ${sql.raw(from)} t where ${all} and ${after(sql`t.sort_value`, sql`t.id`)} order by t.sort_value ${direction}, t.id ${direction} ${offset} limit ${rows})
      union all (select w.id, w.sort_value from (${page}) as w where not ${all})`
  const bySeller = shape.reads === 'sellers' ? sellersFirst(value, views, column, conditions(), cap) : undefined
  const byDays = daysOnly ? daysFirst(column, daysOnly, cap) : undefined
  // The matches read first, if the list reads some: its tags', its sellers' or those delivering in time.
  const first = shape.tagged ? { from: 'tagged' as const, ctes: taggedCte, all: allTagged, total: sql`(select n from tagged_count)` } : (bySeller ?? byDays)
  const pageOf = first ? firstThenWalk(first.from, first.all) : page
  // The first `cap + 1` matches (`except` some filters) in the list's order; in a category,
  // category by category, as its indexes hold them (one walk, not one per subcategory). The total
  // counts them with every filter, the facets' pools without the facets' filters.
  const firstMatches = (except: FacetFilter[], withCategory: boolean) =>
    withCategory
      ? sql`select s.id, s.${column} as sort_value, ${facetColumns} from ${services} s where ${conditions(except, true)} order by s.category_id ${direction}, s.${column} ${direction}, s.id ${direction} limit ${capped(cap)}`
      : walk(conditions(except, false), capped(cap))
  const matching = (withCategory: boolean) => firstMatches(FACET_FILTERS, withCategory)
  const plain = shape.tagged ? sql`false` : plainOf(value, shape.narrowed)
  const kept = sql`(select coalesce(sum(n.active_services), 0)::int from ${categoryServiceCounts} n${hasCategory ? sql` where n.category_id = any((select ids from wanted)::uuid[])` : sql``})`
  // Counted in no order, with a bound an index can take: a price range from the price index, a
  // lowest rating (without a price range) from the rating index. Two statements of which the
  // values run one: a generic plan cannot pick the index by the value.
  const countWith = (bound: SQL) =>
    sql`(select count(*)::int from (select 1 from ${services} s where ${filtersOf({ views, value, selective: shape.narrowed, priceApart: true })} and ${bound}${searched}${hasCategory ? sql` and ${inCategory}` : sql``} limit ${capped(cap)}) as capped)`
  const cappedCount = rated
    ? sql`(select count(*)::int from (select 1 from ${services} s where ${ratedOnly(value)} limit ${capped(cap)}) as capped)`
    : sql`case when ${value.minRating()} is not null and ${value.minPrice()} is null and ${value.maxPrice()} is null
      then ${countWith(sql`s.rating_average >= ${value.minRating()}`)}
      else ${countWith(sql`s.starting_price_cents >= coalesce(${value.minPrice()}, -1) and s.starting_price_cents <= coalesce(${value.maxPrice()}, ${literal(INT_MAX)})`)} end`
  // Without the facets' filters (a rating alone uses none), the pool holds the same first matches the total counts.
  const pooled = sql`(select count(*)::int from pool)`
  const counted = !shape.facets ? cappedCount : rated ? pooled : sql`case when ${facetFiltersUnused(value)} then ${pooled} else ${cappedCount} end`
  const total = first
    ? first.total
    : rated
      ? counted
      : sql`case when ${plain} then ${kept} else ${counted} end`
  const probe = sql`(select count(*) from (select 1 from ${services} s where ${filtersOf(scope([]))}${bounds([])}${hasCategory ? sql` and ${inCategory}` : sql``} and s.search_vector @@ (select q from typed) limit 3) as probe)`
  return sql`with ${givenCte(hidden)} ${hasCategory ? categoryCtes(value, hidden) : sql``}
    ${shape.narrowed ? searchCtes(value, hidden, sql`(case when ${value.search()} is null then 3 else ${probe} end)`) : sql``}
    ${startSql(value, hidden, shape.sortBy, shape.sortOrder)}
    ${first?.ctes ?? sql``}
    page as (${pageOf}),
    ${shape.facets ? poolsSql(views, hidden, hasCategory, matching, cap) : sql``}
    counted as (select ${total} as total${fromGiven(hidden)})
    ${selectSql(shape, {
      value,
      hidden,
      exact: sql`(${plain} or (select total from counted) <= ${literal(cap)})`,
      items: itemsSql(views, sql`page.sort_value ${direction}, page.id ${direction}`),
      plain,
      cap,
    })}`
}

/**
 * A search by relevance with any filters (decision 0072): at most `cap + 1` candidates the GIN
 * index yields for the words as typed, ranked with `ts_rank`; when fewer than three, the
 * candidates of the corrected words instead; the best RERANKED ranked again with the title's word
 * similarity; the page in the order every page shares (re-ranked first, then the rest by rank,
 * then id). The total is the candidates' count, and the facets count the candidates.
 */
function searchSql(shape: FilteredListShape, cap: number, views: ServiceViews): SQL {
  const hasCategory = shape.category === 'ref'
  const value = valuesOf(true)
  const scope: Scope = { views, value, selective: true, priceApart: false }
  // Without filters, the candidates are checked for being live alone; the values are checked to
  // be unused once per execution, so that values with filters find nothing here.
  const unfiltered = sql`s.status = 'active' and s.deleted_at is null and ${unusedOf(value, ['minPrice', 'maxPrice', 'deliveryDays', 'minRating', 'levels', 'online', 'sellerId', 'tags'])}`
  const live = shape.reads === 'words' ? (_except: FacetFilter[]) => sql`(${unfiltered})` : (except: FacetFilter[]) => filtersOf(scope, except)
  const conditions = (except: FacetFilter[] = [], withCategory = hasCategory) => sql`${live(except)}${withCategory ? sql` and ${inCategory}` : sql``}`
  const matches = (query: SQL, where: SQL) =>
    sql`select s.id, s.title, ts_rank(s.search_vector, ${query}) as cheap, ${facetColumns} from ${services} s where ${where} and s.search_vector @@ ${query} limit ${capped(cap)}`
  const final = sql`(select q from query)`
  const corrected = sql`(select q from fix)`
  // The search text, lower case, once per execution.
  const search = sql`(select lower(${value.search()}))`
  // The facets' pools: the candidates themselves when the list uses none of the facets' filters.
  const matching = (withCategory: boolean) =>
    withCategory === hasCategory
      ? sql`select * from main where ${facetFiltersUnused(value)} union all select * from (${matches(final, conditions(FACET_FILTERS, withCategory))}) as own where not ${facetFiltersUnused(value)}`
      : matches(final, conditions(FACET_FILTERS, withCategory))
  return sql`with ${givenCte(true)} ${hasCategory ? categoryCtes(value, true) : sql``}
    first as (${onGiven(true, matches(sql`(select websearch_to_tsquery('english', ${value.search()}))`, conditions()))}),
    ${searchCtes(value, true, sql`(select count(*) from first)`)}
    again as (${onGiven(true, matches(final, sql`${corrected} is not null and ${conditions()}`))}),
    main as (select * from first where ${corrected} is null union all select * from again),
    best as (${onGiven(
      true,
      sql`select id, cheap + word_similarity(${search}, lower(title)) as rank
      from (select id, title, cheap from main order by cheap desc, id desc limit ${literal(RERANKED)}) as top`,
    )}),
    page as (
      select main.id, (best.id is not null) as reranked, coalesce(best.rank, main.cheap) as rank
      from main left join best on best.id = main.id
      order by reranked desc, rank desc, main.id desc
      offset (select ${p('offset')}::int) limit ${literal(shape.rows)}),
    ${shape.facets ? poolsSql(views, true, hasCategory, matching, cap, shape.reads === 'words' ? 'main' : undefined) : sql``}
    counted as (select count(*)::int as total from main)
    ${selectSql(shape, {
      value,
      hidden: true,
      exact: sql`((select total from counted) <= ${literal(cap)})`,
      items: itemsSql(views, sql`page.reranked desc, page.rank desc, page.id desc`),
      plain: sql`false`,
      cap,
    })}`
}
