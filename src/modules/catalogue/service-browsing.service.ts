import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { isOwner, isVisibleTo, mayModerate } from './service-rules.ts'
import { createServicesRepository, type ServiceSort } from './services.repository.ts'
import type { ServiceRow, ServiceStatus } from './services.table.ts'

export interface ServiceListQuery extends PageRequest {
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
  uploads: Pick<UploadsService, 'filesOf' | 'urlOf'>
  users: Pick<UsersService, 'publicSummariesOf'>
}

/** Price filters in cents, rounded inward so a bound never admits a price outside it. */
const lowerCents = (amount: number) => Math.ceil(amount * 100 - 1e-6)
const upperCents = (amount: number) => Math.floor(amount * 100 + 1e-6)

/** Reading services: one, a page of them, search, and the full answer a viewer may see. */
export function createServiceBrowsing(deps: BrowsingDeps) {
  const { db, uploads, users } = deps

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

  async function summarise(rows: ServiceRow[]) {
    const relations = await relationsOf(db, rows)
    return rows.map((row) => ({
      id: row.id,
      title: row.title,
      shortDescription: row.shortDescription,
      ...common(row),
      banner: relations.banner(row),
      seller: relations.seller(row),
      category: relations.category(row),
    }))
  }

  /** The full answer for each row, as `viewer` may see it (the rejection reason is not public). */
  async function describeAll(rows: ServiceRow[], viewer: Actor | null) {
    const repository = createServicesRepository(db)
    const ids = rows.map((row) => row.id)
    const [relations, packages, extras, gallery] = await Promise.all([
      relationsOf(db, rows),
      repository.packagesOf(ids),
      repository.extrasOf(ids),
      uploads.filesOf(db, 'service', ids, 'service_gallery'),
    ])
    return rows.map((row) => ({
      id: row.id,
      title: row.title,
      shortDescription: row.shortDescription,
      description: row.description,
      tags: row.tags,
      status: row.status,
      rejectionReason: isOwner(row, viewer) || mayModerate(viewer) ? row.rejectionReason : null,
      category: relations.category(row),
      seller: relations.seller(row),
      packages: packages
        .filter((item) => item.serviceId === row.id)
        .map((item) => ({
          id: item.id,
          name: item.name,
          description: item.description,
          price: fromCents(item.priceCents),
          deliveryDays: item.deliveryDays,
          revisions: item.revisions ?? ('unlimited' as const),
          features: item.features,
        })),
      extras: extras
        .filter((item) => item.serviceId === row.id)
        .map((item) => ({ id: item.id, title: item.title, price: fromCents(item.priceCents), additionalDays: item.additionalDays })),
      banner: relations.banner(row),
      images: gallery.filter((file) => file.objectId === row.id).map((file) => ({ id: file.id, url: uploads.urlOf(file), order: file.order })),
      ...common(row),
      updatedAt: row.updatedAt.toISOString(),
    }))
  }

  const describe = async (row: ServiceRow, viewer: Actor | null) => (await describeAll([row], viewer))[0]!

  async function resolveCategoryIds(idOrSlug: string): Promise<string[] | undefined> {
    const repository = createServicesRepository(db)
    const category = await repository.findCategory(idOrSlug)
    return category ? repository.categoryIdsWithin(category.id) : undefined
  }

  async function listActive(query: ServiceListQuery, categoryIds: string[] | undefined) {
    const search = query.search?.trim() || undefined
    if (query.minPrice !== undefined && query.maxPrice !== undefined && query.minPrice > query.maxPrice) throw fieldError('minPrice', 'must not be more than maxPrice')
    if (query.sortBy === 'relevance' && !search) throw fieldError('sortBy', 'relevance needs a search')
    const sortBy = query.sortBy ?? (search ? 'relevance' : 'createdAt')
    const tags = query.tags
      ?.split(',')
      .map((tag) => tag.trim().toLowerCase())
      .filter((tag) => tag !== '')
    const { rows, total } = await createServicesRepository(db).searchActive(
      {
        categoryIds,
        search,
        minPriceCents: query.minPrice === undefined ? undefined : lowerCents(query.minPrice),
        maxPriceCents: query.maxPrice === undefined ? undefined : upperCents(query.maxPrice),
        sellerId: query.sellerId,
        tags,
        sortBy,
        sortOrder: query.sortOrder ?? (sortBy === 'price' ? 'asc' : 'desc'),
      },
      offsetOf(query),
      query.limit,
    )
    return toPage(await summarise(rows), total, query)
  }

  return {
    describe,

    async getService(viewer: Actor | null, serviceId: string) {
      const row = await createServicesRepository(db).findById(serviceId)
      if (!row || !isVisibleTo(row, viewer)) throw notFound('Service')
      return describe(row, viewer)
    },

    /** `GET /admin/services`: oldest first, so the review queue is worked in order. */
    async listForModeration(viewer: Actor, status: ServiceStatus, page: PageRequest) {
      const { rows, total } = await createServicesRepository(db).listByStatus(status, offsetOf(page), page.limit)
      return toPage(await describeAll(rows, viewer), total, page)
    },

    /** `GET /services`: the public catalogue. An unknown category is an empty result. */
    async listServices(query: ServiceListQuery & { category?: string }) {
      const categoryIds = query.category === undefined ? undefined : ((await resolveCategoryIds(query.category)) ?? [])
      return listActive(query, categoryIds)
    },

    /** `GET /categories/{id or slug}/services`: the category and its subcategories. */
    async listCategoryServices(idOrSlug: string, query: ServiceListQuery) {
      const categoryIds = await resolveCategoryIds(idOrSlug)
      if (!categoryIds) throw notFound('Category')
      return listActive(query, categoryIds)
    },

    /** Services that are not soft-deleted, per seller (staff user lists): one grouped query. */
    countServicesBySellers: (executor: Executor, sellerIds: string[]) => createServicesRepository(executor).countBySellers(sellerIds),
  }
}

export type ServiceBrowsing = ReturnType<typeof createServiceBrowsing>
