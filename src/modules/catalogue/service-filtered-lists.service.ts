import type { Db } from '../../db/client.ts'
import { declareLazyStatements } from '../../db/statements.ts'
import { COUNT_CAP, levelsOf, lowerCents, pageTextOf, orderOf, rowsFor, tagsOf, upperCents, windowOf, type ServiceListQuery } from './service-list-pages.ts'
import type { SellerPresence } from './seller-presence.service.ts'
import { filteredListShapes, pageReadingOf, prepareFilteredList, searchReadingOf, type FilteredListShape, type FilteredListValues, type ServiceViews } from './services.repository.ts'

/**
 * Lists with filters or facets, and searches: one prepared statement per shape (decision 0209).
 * A sorted list narrowed by a seller or a search is planned for its values on each call (its
 * statement sent unnamed): the index that finds its rows depends on them, which one generic plan
 * cannot see. A list narrowed by tags alone decides that in its statement, by how many services
 * carry the tags, and keeps one generic plan (decision 0230). Any other sorted list takes the
 * statement of the way its values say its page is read (`pageReadingOf`, decision 0238).
 */
export function createFilteredLists(deps: { db: Db; views: ServiceViews; presence: Pick<SellerPresence, 'onlineSellers'> }) {
  const { db, views, presence } = deps
  const statements = new Map<string, ReturnType<typeof prepareFilteredList>>()
  const statementOf = (shape: FilteredListShape) => {
    const key = `${shape.category}:${shape.sortBy}:${shape.sortOrder}:${shape.rows}:${shape.narrowed}:${shape.tagged}:${shape.reads}:${shape.facets}`
    let statement = statements.get(key)
    if (!statement) statements.set(key, (statement = prepareFilteredList(shape, COUNT_CAP, views)))
    return statement
  }
  declareLazyStatements('catalogue.filtered', () => {
    for (const shape of filteredListShapes()) statementOf(shape)
  })

  const valuesOf = async (query: ServiceListQuery, category: string | undefined, search: string | undefined): Promise<Omit<FilteredListValues, 'after' | 'offset' | 'limit'>> => ({
    category: category ?? null,
    search: search ?? null,
    minPriceCents: query.minPrice === undefined ? null : lowerCents(query.minPrice),
    maxPriceCents: query.maxPrice === undefined ? null : upperCents(query.maxPrice),
    deliveryDays: query.deliveryDays ?? null,
    minRating: query.minRating ?? null,
    levels: levelsOf(query)?.join(',') ?? null,
    online: query.sellerOnline === true ? (await presence.onlineSellers()).join(',') : null,
    sellerId: query.sellerId ?? null,
    tags: tagsOf(query)?.join(',') || null,
  })

  return {
    /**
     * A page of the list `query` asks for, within `category` (an id or slug) when given, in one
     * statement; `categoryFound` is false for an unknown category (the page is then empty).
     */
    async listFiltered(query: ServiceListQuery, category: string | undefined) {
      const search = query.search?.trim() || undefined
      const order = orderOf(query, search)
      const window = windowOf(query, order.sortBy, order.sortOrder)
      const values: FilteredListValues = { ...(await valuesOf(query, category, search)), after: window.after ?? null, offset: window.offset, limit: window.limit }
      const facets = query.facets === true
      const sorted = order.sortBy !== 'relevance'
      const tagged = sorted && values.tags !== null && values.sellerId === null && search === undefined && !facets
      const narrowed = sorted && !tagged && (values.sellerId !== null || values.tags !== null || search !== undefined)
      const kind = { category: category === undefined ? ('none' as const) : ('ref' as const), facets }
      const reads = !sorted ? searchReadingOf(values) : !narrowed && !tagged ? pageReadingOf(kind, values) : 'walk'
      const statement = statementOf({ ...kind, sortBy: order.sortBy, sortOrder: order.sortOrder, rows: rowsFor(window.limit), narrowed, tagged, reads })
      const [row] = await (narrowed ? statement.unnamed(db, values) : statement(db, values))
      const page = { items: row!.items, lastShown: row!.lastShown, hasNext: row!.read > window.limit, facets: row!.facets }
      return { categoryFound: row!.categories !== 0, answer: pageTextOf(query, page, row!.exact ? row!.total : COUNT_CAP, row!.exact, order, window) }
    },
  }
}
