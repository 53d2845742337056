import type { Db } from '../../db/client.ts'
import { fieldError } from '../../lib/errors.ts'
import { answerOf, COUNT_CAP, FUZZY_BELOW, listedItemOf, lowerCents, orderOf, tagsOf, upperCents, windowOf, type ServiceListQuery } from './service-list-pages.ts'
import { createServicesRepository, type ListedService, type ServiceViews } from './services.repository.ts'

/** Lists with a price, seller or tag filter (or a search within a category): built per request. */
export function createFilteredLists(deps: { db: Db; views: ServiceViews }) {
  const { db, views } = deps

  return {
    async listActive(query: ServiceListQuery, categoryIds: string[] | undefined) {
      const search = query.search?.trim() || undefined
      const { sortBy, sortOrder } = orderOf(query, search)
      const filter = {
        categoryIds,
        minPriceCents: query.minPrice === undefined ? undefined : lowerCents(query.minPrice),
        maxPriceCents: query.maxPrice === undefined ? undefined : upperCents(query.maxPrice),
        sellerId: query.sellerId,
        tags: tagsOf(query),
        sortOrder,
      } as const
      const window = windowOf(query, sortBy, sortOrder)
      const repository = createServicesRepository(db)

      let rows: ListedService[]
      let total: number
      let isExact: boolean
      if (search === undefined) {
        if (sortBy === 'relevance') throw fieldError('sortBy', 'relevance needs a search')
        const listed = await repository.listActive({ ...filter, sortBy }, window, COUNT_CAP, views)
        rows = listed.rows
        isExact = listed.isExact
        total = listed.total ?? (await repository.countActive(filter, COUNT_CAP))
        if (!isExact && total <= COUNT_CAP) isExact = true
        if (total > COUNT_CAP && !isExact) total = COUNT_CAP
      } else {
        const searchFilter = { ...filter, sortBy, search }
        // Full text first; the misspelling-tolerant search only when it finds too little, and
        // only when some word has near words in the lexicon (otherwise it would find the same).
        const run = async (corrected: string | null) => {
          const found = await repository.searchActive(searchFilter, window, { corrected, candidateCap: COUNT_CAP, views })
          const counted = found.total ?? (await repository.searchActive(searchFilter, { offset: 0, limit: 1 }, { corrected, candidateCap: COUNT_CAP, views })).total ?? 0
          return { found, counted }
        }
        let { found, counted } = await run(null)
        if (counted < FUZZY_BELOW) {
          const corrected = await repository.correctedQuery(search)
          if (corrected !== null) ({ found, counted } = await run(corrected))
        }
        total = counted
        rows = found.rows
        isExact = total <= COUNT_CAP
        total = Math.min(total, COUNT_CAP)
      }
      return answerOf(query, rows.map(listedItemOf), total, isExact, { sortBy, sortOrder }, window)
    },
  }
}
