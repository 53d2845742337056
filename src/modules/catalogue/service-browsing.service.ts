import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import { declareLazyStatements } from '../../db/statements.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import { fromCents } from '../../lib/money.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { isOwner, isVisibleTo, mayModerate } from './service-rules.ts'
import { COMMON_LIST_ROWS, commonListShapes, commonSearchShapes, createServicesRepository, prepareCommonList, prepareCommonSearch, prepareServiceRead, type CommonListShape, type CommonSearchShape, type ListedJson, type ListedService, type PageWindow, type ServiceSort, type ServiceViews } from './services.repository.ts'
import type { ServiceExtraRow, ServicePackageRow, ServiceRow, ServiceStatus } from './services.table.ts'

export interface ServiceListQuery extends PageRequest {
  cursor?: string
  search?: string
  minPrice?: number
  maxPrice?: number
  sortBy?: ServiceSort
  sortOrder?: 'asc' | 'desc'
  sellerId?: string
  tags?: string
}

export interface BrowsingDeps {
  db: Db
  uploads: Pick<UploadsService, 'filesOf' | 'urlOf' | 'publicFileUrlSql' | 'publicFilesJsonSql'>
  users: Pick<UsersService, 'publicSummariesOf' | 'publicSummarySql'>
}

/** Totals above this are reported as this number with `totalIsExact: false` ("1,000+"). */
export const COUNT_CAP = 1000
/** Full text finding fewer matches than this brings in the misspelling-tolerant search. */
const FUZZY_BELOW = 3

interface Cursor {
  sortBy: ServiceSort
  sortOrder: 'asc' | 'desc'
  /** Keyset: the last service of the previous page. */
  id?: string
  /** Relevance pages (a bounded, ranked set) go on by position. */
  offset?: number
}

const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url')

function decodeCursor(value: string): Cursor | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<Cursor>
    if (typeof parsed !== 'object' || parsed === null) return undefined
    if (parsed.id !== undefined && !isUuid(parsed.id)) return undefined
    if (parsed.offset !== undefined && !(Number.isSafeInteger(parsed.offset) && parsed.offset >= 0 && parsed.offset <= COUNT_CAP)) return undefined
    if ((parsed.id === undefined) === (parsed.offset === undefined)) return undefined
    return parsed as Cursor
  } catch {
    return undefined
  }
}

/** The page's window: `page`/`limit`, or `cursor` (which must come from the same sort). */
function windowOf(query: ServiceListQuery, sortBy: ServiceSort, sortOrder: 'asc' | 'desc'): PageWindow {
  if (query.cursor === undefined) return { offset: offsetOf(query), limit: query.limit }
  if (query.page !== 1) throw fieldError('cursor', 'cannot be combined with page')
  const cursor = decodeCursor(query.cursor)
  if (!cursor || cursor.sortBy !== sortBy || cursor.sortOrder !== sortOrder || (sortBy === 'relevance') !== (cursor.offset !== undefined)) {
    throw fieldError('cursor', 'is not a nextCursor of this list (same sortBy and sortOrder)')
  }
  return cursor.offset !== undefined ? { offset: cursor.offset, limit: query.limit } : { offset: 0, limit: query.limit, after: cursor.id }
}

/** Price filters in cents, rounded inward so a bound never admits a price outside it. */
const lowerCents = (amount: number) => Math.ceil(amount * 100 - 1e-6)
const upperCents = (amount: number) => Math.floor(amount * 100 + 1e-6)

/** Reading services: one, a page of them, search, and the full answer a viewer may see. */
export function createServiceBrowsing(deps: BrowsingDeps) {
  const { db, uploads, users } = deps
  const views: ServiceViews = {
    sellerOf: (userId) => users.publicSummarySql(userId),
    bannerOf: (serviceId) => uploads.publicFileUrlSql('service', serviceId, 'service_banner'),
    galleryOf: (serviceId) => uploads.publicFilesJsonSql('service', serviceId, 'service_gallery'),
  }
  // Statements built on first use (116 shapes of list and search, most never asked for on a
  // given instance), each once.
  let readService: ReturnType<typeof prepareServiceRead> | undefined
  const serviceRead = () => (readService ??= prepareServiceRead(db, views))
  const commonLists = new Map<string, ReturnType<typeof prepareCommonList>>()
  const commonList = (shape: CommonListShape) => {
    const key = `${shape.category}:${shape.sortBy}:${shape.sortOrder}:${shape.paging}:${shape.rows}`
    let statement = commonLists.get(key)
    if (!statement) commonLists.set(key, (statement = prepareCommonList(shape, views)))
    return statement
  }
  const commonSearches = new Map<string, ReturnType<typeof prepareCommonSearch>>()
  const commonSearch = (shape: CommonSearchShape) => {
    const key = `${shape.paging}:${shape.rows}:${shape.corrected}`
    let statement = commonSearches.get(key)
    if (!statement) commonSearches.set(key, (statement = prepareCommonSearch(shape, COUNT_CAP, views)))
    return statement
  }
  declareLazyStatements('catalogue', () => {
    serviceRead()
    for (const shape of commonListShapes()) commonList(shape)
    for (const shape of commonSearchShapes()) commonSearch(shape)
  })

  const urlsByObject = async (executor: Executor, objectType: 'user' | 'service', ids: string[], tag: 'avatar' | 'service_banner') =>
    new Map((await uploads.filesOf(executor, objectType, ids, tag)).map((row) => [row.objectId!, uploads.urlOf(row)]))

  /** Sellers, categories and banners of many services, one query each (lists never query per row). */
  async function relationsOf(executor: Executor, rows: ServiceRow[]) {
    const sellerIds = [...new Set(rows.map((row) => row.sellerId))]
    const serviceIds = rows.map((row) => row.id)
    const [sellerById, categories, banners] = await Promise.all([
      users.publicSummariesOf(executor, sellerIds),
      createServicesRepository(executor).categoriesByIds([...new Set(rows.map((row) => row.categoryId))]),
      urlsByObject(executor, 'service', serviceIds, 'service_banner'),
    ])
    const categoryById = new Map(categories.map((category) => [category.id, category]))
    return {
      seller: (row: ServiceRow) => sellerById.get(row.sellerId)!,
      category: (row: ServiceRow) => categoryById.get(row.categoryId)!,
      banner: (row: ServiceRow) => banners.get(row.id) ?? null,
    }
  }

  const common = (row: ServiceRow) => ({
    startingPrice: fromCents(row.startingPriceCents),
    rating: { average: row.ratingAverage, count: row.ratingCount },
    ordersCount: row.ordersCount,
    createdAt: row.createdAt.toISOString(),
  })

  /** List rows come with their category, seller and banner (one statement for the page). */
  const summarise = (rows: ListedService[]) =>
    rows.map((row) => ({
      id: row.id,
      title: row.title,
      shortDescription: row.shortDescription,
      ...common(row),
      banner: row.banner,
      seller: row.seller,
      category: row.category,
    }))

  /** The common lists' rows, built by PostgreSQL: the same items as `summarise` gives. */
  const summariseJson = (rows: ListedJson[]) =>
    rows.map((row) => ({
      id: row.id,
      title: row.title,
      shortDescription: row.shortDescription,
      startingPrice: fromCents(row.startingPriceCents),
      rating: { average: row.ratingAverage, count: row.ratingCount },
      ordersCount: row.ordersCount,
      createdAt: row.createdAt,
      banner: row.banner,
      seller: row.seller,
      category: row.category,
    }))

  type Seller = Awaited<ReturnType<typeof users.publicSummariesOf>> extends Map<string, infer V> ? V : never
  interface Offer {
    category: { id: string; name: string; slug: string }
    seller: Seller
    packages: Pick<ServicePackageRow, 'id' | 'name' | 'description' | 'priceCents' | 'deliveryDays' | 'revisions' | 'features'>[]
    extras: Pick<ServiceExtraRow, 'id' | 'title' | 'priceCents' | 'additionalDays'>[]
    banner: string | null
    images: { id: string; url: string; order: number }[]
  }

  /** The full answer, as `viewer` may see it (the rejection reason is not public). */
  const present = (row: ServiceRow, offer: Offer, viewer: Actor | null) => ({
    id: row.id,
    title: row.title,
    shortDescription: row.shortDescription,
    description: row.description,
    tags: row.tags,
    status: row.status,
    rejectionReason: isOwner(row, viewer) || mayModerate(viewer) ? row.rejectionReason : null,
    category: offer.category,
    seller: offer.seller,
    packages: offer.packages.map((item) => ({
      id: item.id,
      name: item.name,
      description: item.description,
      price: fromCents(item.priceCents),
      deliveryDays: item.deliveryDays,
      revisions: item.revisions ?? ('unlimited' as const),
      features: item.features,
    })),
    extras: offer.extras.map((item) => ({ id: item.id, title: item.title, price: fromCents(item.priceCents), additionalDays: item.additionalDays })),
    banner: offer.banner,
    images: offer.images,
    ...common(row),
    updatedAt: row.updatedAt.toISOString(),
  })

  const imagesOf = (files: Awaited<ReturnType<UploadsService['filesOf']>>, serviceId: string) =>
    files.filter((file) => file.objectId === serviceId).map((file) => ({ id: file.id, url: uploads.urlOf(file), order: file.order }))

  /** The full answer for each row (moderation lists, answers to writes): a few grouped queries. */
  async function describeAll(rows: ServiceRow[], viewer: Actor | null) {
    const repository = createServicesRepository(db)
    const ids = rows.map((row) => row.id)
    const [relations, packages, extras, gallery] = await Promise.all([
      relationsOf(db, rows),
      repository.packagesOf(ids),
      repository.extrasOf(ids),
      uploads.filesOf(db, 'service', ids, 'service_gallery'),
    ])
    return rows.map((row) =>
      present(
        row,
        {
          category: relations.category(row),
          seller: relations.seller(row),
          packages: packages.filter((item) => item.serviceId === row.id),
          extras: extras.filter((item) => item.serviceId === row.id),
          banner: relations.banner(row),
          images: imagesOf(gallery, row.id),
        },
        viewer,
      ),
    )
  }

  const describe = async (row: ServiceRow, viewer: Actor | null) => (await describeAll([row], viewer))[0]!

  async function resolveCategoryIds(idOrSlug: string): Promise<string[] | undefined> {
    const ids = await createServicesRepository(db).categoryIdsByRef(idOrSlug)
    return ids.length > 0 ? ids : undefined
  }

  /** The list's order: `relevance` only with a search (and its default then), price cheapest first, others newest or best first. */
  function orderOf(query: ServiceListQuery, search: string | undefined) {
    if (query.minPrice !== undefined && query.maxPrice !== undefined && query.minPrice > query.maxPrice) throw fieldError('minPrice', 'must not be more than maxPrice')
    if (query.sortBy === 'relevance' && !search) throw fieldError('sortBy', 'relevance needs a search')
    const sortBy = query.sortBy ?? (search ? 'relevance' : 'createdAt')
    const sortOrder = sortBy === 'relevance' ? 'desc' : (query.sortOrder ?? (sortBy === 'price' ? 'asc' : 'desc'))
    return { sortBy, sortOrder } as const
  }

  const tagsOf = (query: ServiceListQuery) =>
    query.tags
      ?.split(',')
      .map((tag) => tag.trim().toLowerCase())
      .filter((tag) => tag !== '')

  /** The answer: `limit` items of the rows (one more says there is a next page), the total, the cursor of the next page. */
  function answerOf<Item extends { id: string }>(query: ServiceListQuery, items: Item[], total: number, isExact: boolean, order: { sortBy: ServiceSort; sortOrder: 'asc' | 'desc' }, window: PageWindow) {
    const hasNext = items.length > window.limit
    const shown = items.slice(0, window.limit)
    const last = shown.at(-1)
    const nextCursor = !hasNext || !last ? null : encodeCursor(order.sortBy === 'relevance' ? { ...order, offset: window.offset + window.limit } : { ...order, id: last.id })
    const page = toPage(shown, total, query)
    return {
      items: page.items,
      pagination: { ...page.pagination, hasNext, hasPrev: page.pagination.hasPrev || query.cursor !== undefined, totalIsExact: isExact, nextCursor },
    }
  }

  /**
   * A list without a search or a price, seller or tag filter: one prepared statement, the
   * category resolved in it. `undefined` when the category is unknown.
   */
  async function listCommon(query: ServiceListQuery, category: string | undefined) {
    const order = orderOf(query, undefined)
    if (order.sortBy === 'relevance') throw fieldError('sortBy', 'relevance needs a search')
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
    return answerOf(query, summariseJson(row.items.slice(0, window.limit + 1)), row.total, true, order, window)
  }

  /** The statement's row count for a page: the page size plus one, rounded up to a prepared size. */
  const rowsFor = (limit: number) => COMMON_LIST_ROWS.find((rows) => rows > limit) ?? COMMON_LIST_ROWS.at(-1)!

  /** A search with no other filter, by relevance: `undefined` when it is not one. */
  const commonSearchOf = (query: ServiceListQuery & { category?: string }) => {
    const search = query.search?.trim()
    if (!search || query.category !== undefined || (query.sortBy !== undefined && query.sortBy !== 'relevance') || hasOtherFilters(query)) return undefined
    return search
  }

  /**
   * A common search: one prepared statement, and a second one with the corrected query when full
   * text finds too little (as `listActive` does).
   */
  async function searchCommon(query: ServiceListQuery, search: string) {
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
    return answerOf(query, summariseJson(found.items.slice(0, window.limit + 1)), Math.min(found.total, COUNT_CAP), found.total <= COUNT_CAP, order, window)
  }

  /** An unknown category in `GET /services?category=`: no services (the order and cursor are still checked). */
  function emptyAnswer(query: ServiceListQuery) {
    const order = orderOf(query, undefined)
    if (order.sortBy === 'relevance') throw fieldError('sortBy', 'relevance needs a search')
    return answerOf(query, [], 0, true, order, windowOf(query, order.sortBy, order.sortOrder))
  }

  /** A price, seller or tag filter: lists with one are built per request. */
  const hasOtherFilters = (query: ServiceListQuery) => query.minPrice !== undefined || query.maxPrice !== undefined || query.sellerId !== undefined || Boolean(tagsOf(query)?.length)

  const isCommon = (query: ServiceListQuery) => !query.search?.trim() && !hasOtherFilters(query)

  async function listActive(query: ServiceListQuery, categoryIds: string[] | undefined) {
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
    return answerOf(query, summarise(rows), total, isExact, { sortBy, sortOrder }, window)
  }

  return {
    describe,

    /** One prepared statement: the service, its offer, seller, banner and gallery. */
    async getService(viewer: Actor | null, serviceId: string) {
      const row = await serviceRead()(serviceId)
      if (!row || !isVisibleTo(row, viewer)) throw notFound('Service')
      // The statement wrote `rejectionReason: null`; only its owner and moderators see a real one.
      if (row.rejectionReason === null || !(isOwner(row, viewer) || mayModerate(viewer))) return row.service
      return { ...row.service.parse(), rejectionReason: row.rejectionReason }
    },

    /** `GET /admin/services`: oldest first, so the review queue is worked in order. */
    async listForModeration(viewer: Actor, status: ServiceStatus, page: PageRequest) {
      const { rows, total } = await createServicesRepository(db).listByStatus(status, offsetOf(page), page.limit)
      return toPage(await describeAll(rows, viewer), total, page)
    },

    /** `GET /services`: the public catalogue. An unknown category is an empty result. */
    async listServices(query: ServiceListQuery & { category?: string }) {
      if (isCommon(query)) return (await listCommon(query, query.category)) ?? emptyAnswer(query)
      const search = commonSearchOf(query)
      if (search !== undefined) return searchCommon(query, search)
      const categoryIds = query.category === undefined ? undefined : ((await resolveCategoryIds(query.category)) ?? [])
      return listActive(query, categoryIds)
    },

    /** `GET /categories/{id or slug}/services`: the category and its subcategories. */
    async listCategoryServices(idOrSlug: string, query: ServiceListQuery) {
      if (isCommon(query)) {
        const answer = await listCommon(query, idOrSlug)
        if (!answer) throw notFound('Category')
        return answer
      }
      const categoryIds = await resolveCategoryIds(idOrSlug)
      if (!categoryIds) throw notFound('Category')
      return listActive(query, categoryIds)
    },

    /** Services that are not soft-deleted, per seller (staff user lists): one grouped query. */
    countServicesBySellers: (executor: Executor, sellerIds: string[]) => createServicesRepository(executor).countBySellers(sellerIds),
  }
}

export type ServiceBrowsing = ReturnType<typeof createServiceBrowsing>
