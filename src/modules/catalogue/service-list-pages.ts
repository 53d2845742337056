import { fieldError } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { Static } from '@sinclair/typebox'
import { JsonText } from '../../db/json-sql.ts'
import { COMMON_LIST_ROWS, type PageWindow, type ServiceSort } from './services.repository.ts'
import type { ServicePage } from './services.schemas.ts'

/** The rules every list of services shares: its order, its window (page or cursor), its answer. */

export interface ServiceListQuery extends PageRequest {
  cursor?: string
  search?: string
  minPrice?: number
  maxPrice?: number
  sortBy?: ServiceSort
  sortOrder?: 'asc' | 'desc'
  sellerId?: string
  tags?: string
  deliveryDays?: number
  minRating?: number
  /** Each value one level or several, comma-separated (the parameter may be repeated). */
  sellerLevel?: string[]
  sellerOnline?: boolean
  facets?: boolean
}

interface ListOrder {
  sortBy: ServiceSort
  sortOrder: 'asc' | 'desc'
}

/** Totals above this are reported as this number with `totalIsExact: false` ("1,000+"). */
export const COUNT_CAP = 1000

interface Cursor extends ListOrder {
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
export function windowOf(query: ServiceListQuery, sortBy: ServiceSort, sortOrder: 'asc' | 'desc'): PageWindow {
  if (query.cursor === undefined) return { offset: offsetOf(query), limit: query.limit }
  if (query.page !== 1) throw fieldError('cursor', 'cannot be combined with page')
  const cursor = decodeCursor(query.cursor)
  if (!cursor || cursor.sortBy !== sortBy || cursor.sortOrder !== sortOrder || (sortBy === 'relevance') !== (cursor.offset !== undefined)) {
    throw fieldError('cursor', 'is not a nextCursor of this list (same sortBy and sortOrder)')
  }
  return cursor.offset !== undefined ? { offset: cursor.offset, limit: query.limit } : { offset: 0, limit: query.limit, after: cursor.id }
}

/** Price filters in cents, rounded inward so a bound never admits a price outside it. */
export const lowerCents = (amount: number) => Math.ceil(amount * 100 - 1e-6)
export const upperCents = (amount: number) => Math.floor(amount * 100 + 1e-6)

/** The list's order: `relevance` only with a search (and its default then), price cheapest first, others newest or best first. */
export function orderOf(query: ServiceListQuery, search: string | undefined) {
  if (query.minPrice !== undefined && query.maxPrice !== undefined && query.minPrice > query.maxPrice) throw fieldError('minPrice', 'must not be more than maxPrice')
  if (query.sortBy === 'relevance' && !search) throw fieldError('sortBy', 'relevance needs a search')
  const sortBy = query.sortBy ?? (search ? 'relevance' : 'createdAt')
  const sortOrder = sortBy === 'relevance' ? 'desc' : (query.sortOrder ?? (sortBy === 'price' ? 'asc' : 'desc'))
  return { sortBy, sortOrder } as const
}

/** The order of a list without a search, which cannot be by relevance. */
export function unsearchedOrderOf(query: ServiceListQuery) {
  const order = orderOf(query, undefined)
  if (order.sortBy === 'relevance') throw fieldError('sortBy', 'relevance needs a search')
  return { sortBy: order.sortBy, sortOrder: order.sortOrder }
}

export const tagsOf = (query: ServiceListQuery) =>
  query.tags
    ?.split(',')
    .map((tag) => tag.trim().toLowerCase())
    .filter((tag) => tag !== '')

/** The seller levels asked for, each once, in the order given. */
export const levelsOf = (query: ServiceListQuery) => (query.sellerLevel === undefined ? undefined : [...new Set(query.sellerLevel.flatMap((value) => value.split(',')))])

/** A filter other than the category (`sellerOnline=false` filters nothing). */
const hasFilters = (query: ServiceListQuery) =>
  query.minPrice !== undefined ||
  query.maxPrice !== undefined ||
  query.sellerId !== undefined ||
  Boolean(tagsOf(query)?.length) ||
  query.deliveryDays !== undefined ||
  query.minRating !== undefined ||
  query.sellerLevel !== undefined ||
  query.sellerOnline === true

/** A list without a search, a filter or facets: the common lists' statements, with exact totals. */
export const isCommon = (query: ServiceListQuery) => !query.search?.trim() && !hasFilters(query) && query.facets !== true

/** The statement's row count for a page: the page size plus one, rounded up to a prepared size. */
export const rowsFor = (limit: number) => COMMON_LIST_ROWS.find((rows) => rows > limit) ?? COMMON_LIST_ROWS.at(-1)!

/** The page as the routes send it: `GET /services` and a category's services. */
export type ServicePageJson = Static<typeof ServicePage>

/**
 * The answer as JSON text: the page's items as the statement wrote them (`listedJsonSql`), then
 * the pagination (whether a next page exists: the statement read a row past the items; the total;
 * the cursor of the next page, naming the last item) and the facets' text when asked for. The
 * route checks the whole text against its response schema before it is sent (`answer`).
 */
export function pageTextOf(
  query: ServiceListQuery,
  page: { items: string; lastShown: string | null; hasNext: boolean; facets?: string | null },
  total: number,
  isExact: boolean,
  order: ListOrder,
  window: PageWindow,
): JsonText<ServicePageJson> {
  const { items, lastShown, hasNext, facets } = page
  const nextCursor = !hasNext || lastShown === null ? null : encodeCursor(order.sortBy === 'relevance' ? { ...order, offset: window.offset + window.limit } : { ...order, id: lastShown })
  const { pagination } = toPage([], total, query)
  const paging = { ...pagination, hasNext, hasPrev: pagination.hasPrev || query.cursor !== undefined, totalIsExact: isExact, nextCursor }
  return new JsonText(`{"items":${items},"pagination":${JSON.stringify(paging)}${facets == null ? '' : `,"facets":${facets}`}}`)
}
