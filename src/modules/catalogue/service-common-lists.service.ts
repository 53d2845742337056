import type { Db } from '../../db/client.ts'
import { declareLazyStatements } from '../../db/statements.ts'
import { isUuid } from '../../lib/ids.ts'
import { answerOf, COUNT_CAP, FUZZY_BELOW, commonItemOf, rowsFor, unsearchedOrderOf, windowOf, type ServiceListQuery } from './service-list-pages.ts'
import { commonListShapes, commonSearchShapes, createServicesRepository, prepareCommonList, prepareCommonSearch, type CommonListShape, type CommonSearchShape, type ServiceViews } from './services.repository.ts'

/**
 * The lists most visitors ask for, each one prepared statement per shape: the catalogue or a
 * category in one sort, and a search with no other filter.
 */
export function createCommonLists(deps: { db: Db; views: ServiceViews }) {
  const { db, views } = deps
  const commonLists = new Map<string, ReturnType<typeof prepareCommonList>>()
  const commonSearches = new Map<string, ReturnType<typeof prepareCommonSearch>>()
  // Built on first use (over a hundred shapes, most never asked for on a given instance), each once.
  const commonList = (shape: CommonListShape) => {
    const key = `${shape.category}:${shape.sortBy}:${shape.sortOrder}:${shape.paging}:${shape.rows}`
    let statement = commonLists.get(key)
    if (!statement) commonLists.set(key, (statement = prepareCommonList(shape, views)))
    return statement
  }
  const commonSearch = (shape: CommonSearchShape) => {
    const key = `${shape.paging}:${shape.rows}:${shape.corrected}`
    let statement = commonSearches.get(key)
    if (!statement) commonSearches.set(key, (statement = prepareCommonSearch(shape, COUNT_CAP, views)))
    return statement
  }
  declareLazyStatements('catalogue.lists', () => {
    for (const shape of commonListShapes()) commonList(shape)
    for (const shape of commonSearchShapes()) commonSearch(shape)
  })

  return {
    /**
     * A list without a search or a price, seller or tag filter: one prepared statement, the
     * category resolved in it. `undefined` when the category is unknown.
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
      const [row] = await commonList(shape)(db, { category, after: window.after, offset: window.offset })
      if (!row || row.categories === 0) return undefined
      return answerOf(query, row.items.slice(0, window.limit + 1).map(commonItemOf), row.total, true, order, window)
    },

    /**
     * A common search: one prepared statement, and a second one with the corrected query when full
     * text finds too little (as a filtered search does).
     */
    async searchCommon(query: ServiceListQuery, search: string) {
      const order = { sortBy: 'relevance', sortOrder: 'desc' } as const
      const window = windowOf(query, order.sortBy, order.sortOrder)
      const run = async (corrected: string | null) => {
        const shape: CommonSearchShape = { paging: window.offset > 0 ? 'offset' : 'first', rows: rowsFor(window.limit), corrected: corrected !== null }
        const [row] = await commonSearch(shape)(db, { search, corrected: corrected ?? undefined, offset: window.offset })
        return row ?? { total: 0, items: [] }
      }
      let found = await run(null)
      if (found.total < FUZZY_BELOW) {
        const corrected = await createServicesRepository(db).correctedQuery(search)
        if (corrected !== null) found = await run(corrected)
      }
      return answerOf(query, found.items.slice(0, window.limit + 1).map(commonItemOf), Math.min(found.total, COUNT_CAP), found.total <= COUNT_CAP, order, window)
    },

    /** An unknown category in `GET /services?category=`: no services (the order and cursor are still checked). */
    emptyAnswer(query: ServiceListQuery) {
      const order = unsearchedOrderOf(query)
      return answerOf(query, [], 0, true, order, windowOf(query, order.sortBy, order.sortOrder))
    },
  }
}
