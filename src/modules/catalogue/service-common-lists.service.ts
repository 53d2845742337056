import type { Db } from '../../db/client.ts'
import { declareLazyStatements } from '../../db/statements.ts'
import { isUuid } from '../../lib/ids.ts'
import { pageTextOf, rowsFor, unsearchedOrderOf, windowOf, type ServiceListQuery } from './service-list-pages.ts'
import { commonListShapes, prepareCommonList, type CommonListShape, type ServiceViews } from './services.repository.ts'

/**
 * The lists most visitors ask for, each one prepared statement per shape: the catalogue or a
 * category in one sort, without a search, a filter or facets (their totals are the kept counts).
 */
export function createCommonLists(deps: { db: Db; views: ServiceViews }) {
  const { db, views } = deps
  const commonLists = new Map<string, ReturnType<typeof prepareCommonList>>()
  // Built on first use (over a hundred shapes, most never asked for on a given instance), each once.
  const commonList = (shape: CommonListShape) => {
    const key = `${shape.category}:${shape.sortBy}:${shape.sortOrder}:${shape.paging}:${shape.rows}`
    let statement = commonLists.get(key)
    if (!statement) commonLists.set(key, (statement = prepareCommonList(shape, views)))
    return statement
  }
  declareLazyStatements('catalogue.lists', () => {
    for (const shape of commonListShapes()) commonList(shape)
  })

  return {
    /**
     * A list without a search, a filter or facets: one prepared statement, the category resolved
     * in it. `undefined` when the category is unknown.
     */
    async listCommon(query: ServiceListQuery, category: string | undefined) {
      const order = unsearchedOrderOf(query)
      const window = windowOf(query, order.sortBy, order.sortOrder)
      const shape: CommonListShape = {
        category: category === undefined ? 'none' : isUuid(category) ? 'id' : 'slug',
        sortBy: order.sortBy,
        sortOrder: order.sortOrder,
        paging: window.after !== undefined ? 'keyset' : window.offset > 0 ? 'offset' : 'first',
        rows: rowsFor(window.limit),
      }
      const [row] = await commonList(shape)(db, { category, after: window.after, offset: window.offset, limit: window.limit })
      if (!row || row.categories === 0) return undefined
      return pageTextOf(query, { items: row.items, lastShown: row.lastShown, hasNext: row.read > window.limit }, row.total, true, order, window)
    },

    /** An unknown category in `GET /services?category=`: no services (the order and cursor are still checked). */
    emptyAnswer(query: ServiceListQuery) {
      const order = unsearchedOrderOf(query)
      return pageTextOf(query, { items: '[]', lastShown: null, hasNext: false }, 0, true, order, windowOf(query, order.sortBy, order.sortOrder))
    },
  }
}
