import type { Static } from '@sinclair/typebox'
import { sql, type SQL } from 'drizzle-orm'
import { jsonObjectSql } from '../../db/json-sql.ts'
import { sellerLevels } from '../users/users.module.ts'
import { categories, categoryServiceCounts } from './categories.table.ts'
import { deliveryBands, priceBands } from './service-rules.ts'
import { Facets } from './services.schemas.ts'

// The facets of a list (decision 0207): counts per category, price band, delivery band and seller
// level, over a bounded pool of matching services that the list's statement names.

/** `facets` of a page, as the list statements build it. */
export type FacetsJson = Static<typeof Facets>

/** A filter a facet is about, and leaves out of its own counts. */
export type FacetFilter = 'price' | 'delivery' | 'level'

/**
 * What the facets count. Each pool is a relation (a CTE) of at most `cap + 1` services with the
 * columns `category_id`, `starting_price_cents`, `starting_delivery_days` and `seller_id`, the
 * first of the list's matches without its price, delivery and level filters; its sample
 * (`sampleCteSql`) is its first `cap` rows with the seller's `level`. Each facet counts the rows
 * of its sample that pass the other two filters (`accepts`, on the row `x`), so that none counts
 * its own. `pool` and `sample` keep the list's category, `poolAll` and `sampleAll` (the category
 * facet's) do not. `plain` is true when nothing but a category narrows the list: the category
 * facet then reads the kept counts (exact). `accepts` is null in a statement chosen only for
 * values that use none of the three filters: each facet then counts its whole sample, with no
 * check on each row.
 */
export interface FacetSets {
  pool: string
  poolAll: string
  sample: string
  sampleAll: string
  plain: SQL
  cap: number
  accepts: Record<FacetFilter, SQL> | null
}

const { categories: categoryFacet, priceBands: priceFacet, deliveryBands: deliveryFacet, sellerLevels: levelFacet } = Facets.properties

/**
 * A pool's sample, as a CTE named `sample`: the pool's first `cap` rows, with the seller's level.
 * The level is joined after the cut, so which rows are counted does not depend on how PostgreSQL
 * joins; the sellers above `new` (`levelsAboveNew`, the users module's few) are hashed once
 * rather than each row's seller looked up.
 */
export const sampleCteSql = (pool: string, sample: string, cap: number, levelsAboveNew: SQL) =>
  sql`${sql.identifier(sample)} as (select x.category_id, x.starting_price_cents, x.starting_delivery_days, coalesce(r.level, 'new') as level
    from (select * from ${sql.identifier(pool)} limit ${sql.raw(String(cap))}) as x left join (${levelsAboveNew}) as r on r.id = x.seller_id)`

/** The rows a facet counts: those of the sample the other facets' filters accept. */
function sampleOf(sets: FacetSets, sample: string, own: FacetFilter | 'none'): SQL {
  if (sets.accepts === null) return sql`${sql.identifier(sample)}`
  const { accepts } = sets
  const others = (['price', 'delivery', 'level'] as const).filter((filter) => filter !== own).map((filter) => accepts[filter])
  return sql`(select * from ${sql.identifier(sample)} as x where ${sql.join(others, sql` and `)})`
}

/**
 * Counts per category of `hits` (rows with `category_id` and a count `n`): each category and,
 * for a subcategory, its top-level category too, so that a top level counts its subcategories.
 */
const perCategory = (hits: SQL) => sql`select k.slug as key, kp.slug as parent, sum(h.n)::int as count
    from (${hits}) as h
    join ${categories} c on c.id = h.category_id
    cross join lateral (values (c.id), (c.parent_id)) as hit(id)
    join ${categories} k on k.id = hit.id
    left join ${categories} kp on kp.id = k.parent_id
    group by k.slug, kp.slug
    having sum(h.n) > 0`

function categoriesJson(sets: FacetSets): SQL {
  const item = jsonObjectSql(categoryFacet.items, { key: sql`f.key`, parent: sql`f.parent`, count: sql`f.count` })
  const listOf = (counted: SQL) => sql`coalesce((select json_agg(${item} order by f.count desc, f.key) from (${counted}) as f), '[]'::json)`
  // Counted per category first: a few dozen rows to name, not a thousand.
  const sampled = perCategory(sql`select category_id, count(*) as n from ${sampleOf(sets, sets.sampleAll, 'none')} as sample group by category_id`)
  const kept = perCategory(sql`select category_id, active_services as n from ${categoryServiceCounts}`)
  return sql`case when ${sets.plain} then ${listOf(kept)} else ${listOf(sampled)} end`
}

/** A constant of this file's lists (a key or a bound) as SQL: numbers as they are, text quoted. */
const constant = (value: string | number | null) => sql.raw(value === null ? 'null' : typeof value === 'number' ? String(value) : `'${value}'`)

/**
 * Facet entries counted in one pass over a sample: one `count(*) filter (where ...)` per entry,
 * in the entries' order. A join of the entries to the sample would sort and group a thousand
 * rows per facet to get the same few counts.
 */
function tallySql(sample: SQL, entries: { item: (count: SQL) => SQL; when: SQL }[]): SQL {
  return sql`(select json_build_array(${sql.join(
    entries.map(({ item, when }) => item(sql`count(*) filter (where ${when})`)),
    sql`, `,
  )}) from ${sample} as x)`
}

/** Whether the sample's row `x` has `column` within a band (both bounds included; no upper bound for the last). */
const inBand = (column: string, from: number, to: number | null) =>
  to === null ? sql`x.${sql.identifier(column)} >= ${constant(from)}` : sql`x.${sql.identifier(column)} between ${constant(from)} and ${constant(to)}`

const priceBandsJson = (sets: FacetSets) =>
  tallySql(
    sampleOf(sets, sets.sample, 'price'),
    priceBands.map((band) => ({
      item: (count: SQL) =>
        jsonObjectSql(priceFacet.items, {
          key: constant(band.key),
          from: sql`round(${constant(band.fromCents)} / 100.0, 2)`,
          to: band.toCents === null ? sql`null::numeric` : sql`round(${constant(band.toCents)} / 100.0, 2)`,
          count,
        }),
      when: inBand('starting_price_cents', band.fromCents, band.toCents),
    })),
  )

const deliveryBandsJson = (sets: FacetSets) =>
  tallySql(
    sampleOf(sets, sets.sample, 'delivery'),
    deliveryBands.map((band) => ({
      item: (count: SQL) => jsonObjectSql(deliveryFacet.items, { key: constant(band.key), from: constant(band.from), to: band.to === null ? sql`null::int` : constant(band.to), count }),
      when: inBand('starting_delivery_days', band.from, band.to),
    })),
  )

const levelsJson = (sets: FacetSets) =>
  tallySql(
    sampleOf(sets, sets.sample, 'level'),
    sellerLevels.map((level) => ({ item: (count: SQL) => jsonObjectSql(levelFacet.items, { key: constant(level), count }), when: sql`x.level = ${constant(level)}` })),
  )

/** Whether a pool was cut: it holds more rows than a facet counts. */
const wasCut = (sets: FacetSets, pool: string) => sql`(select count(*) from ${sql.identifier(pool)}) > ${sql.raw(String(sets.cap))}`

/** The `facets` JSON (`Facets`) of the pools, built by PostgreSQL. */
export function facetsSql(sets: FacetSets): SQL<FacetsJson> {
  return jsonObjectSql(Facets, {
    categories: categoriesJson(sets),
    priceBands: priceBandsJson(sets),
    deliveryBands: deliveryBandsJson(sets),
    sellerLevels: levelsJson(sets),
    countsAreExact: sql`not (${wasCut(sets, sets.pool)} or (not ${sets.plain} and ${wasCut(sets, sets.poolAll)}))`,
  })
}
