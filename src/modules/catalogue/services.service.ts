import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { fromCents, toCents } from '../../lib/money.ts'
import { fieldError, notFound, validationError, type FieldError } from '../../http/errors.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { StagedFile } from '../../http/multipart.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { UsersService } from '../users/users.service.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { can, type Actor } from '../roles/permissions.ts'
import type { UploadsService } from '../uploads/uploads.service.ts'
import { invalidTransition } from './services.errors.ts'
import { createServicesRepository, type ServiceSort, type ServicesRepository } from './services.repository.ts'
import type { ServiceRow, ServiceStatus } from './services.table.ts'

/** A gallery holds at most this many images (spec section 8). */
export const GALLERY_LIMIT = 10

export interface OfferPackage {
  name: string
  description?: string
  price: number
  deliveryDays: number
  revisions: number | 'unlimited'
  features?: string[]
}

export interface OfferExtra {
  title: string
  price: number
  additionalDays?: number
}

/** What a seller writes on create and on edit (PUT replaces all of it). */
export interface ServiceFields {
  title: string
  shortDescription?: string
  description: string
  categoryId: string
  tags?: string[]
  packages: OfferPackage[]
  extras?: OfferExtra[]
  bannerId?: string
  imageIds?: string[]
}

export interface ServiceListQuery extends PageRequest {
  search?: string
  minPrice?: number
  maxPrice?: number
  sortBy?: ServiceSort
  sortOrder?: 'asc' | 'desc'
  sellerId?: string
  tags?: string
}

type ServiceUploads = Pick<UploadsService, 'bindUpload' | 'attachFile' | 'detachFile' | 'reorderFiles' | 'filesOf' | 'urlOf'>

const serviceSlot = (serviceId: string, tag: 'service_banner' | 'service_gallery', order?: number) =>
  ({ objectType: 'service', objectId: serviceId, tag, ...(order !== undefined && { order }) }) as const

const mayModerate = (actor: Actor | null): boolean => actor !== null && can(actor, 'view_services')
const isOwner = (row: ServiceRow, actor: Actor | null): boolean => actor !== null && row.sellerId === actor.id

/** DESIGN 6 "Services": active is public; any other state only for its owner and staff with view_services. */
const isVisibleTo = (row: ServiceRow, viewer: Actor | null): boolean =>
  row.deletedAt === null && (row.status === 'active' || isOwner(row, viewer) || mayModerate(viewer))

/** Prices in cents, or the field errors of amounts with more than two decimals. */
function priceOffer(fields: ServiceFields): { packages: number[]; extras: number[]; problems: FieldError[] } {
  const problems: FieldError[] = []
  const cents = (amount: number, field: string) => {
    const value = toCents(amount)
    if (value === undefined) problems.push({ field, message: 'must have at most two decimals' })
    return value ?? 0
  }
  return {
    packages: fields.packages.map((item, index) => cents(item.price, `packages.${index}.price`)),
    extras: (fields.extras ?? []).map((item, index) => cents(item.price, `extras.${index}.price`)),
    problems,
  }
}

/** Price filters in cents, rounded inward so a bound never admits a price outside it. */
const lowerCents = (amount: number) => Math.ceil(amount * 100 - 1e-6)
const upperCents = (amount: number) => Math.floor(amount * 100 + 1e-6)

export function createServicesService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  uploads: ServiceUploads
  users: Pick<UsersService, 'publicSummariesOf'>
}) {
  const { db, clock, outbox, uploads, users } = deps

  const urlsByObject = async (objectType: 'user' | 'service', ids: string[], tag: 'avatar' | 'service_banner') =>
    new Map((await uploads.filesOf(objectType, ids, tag)).map((row) => [row.objectId!, uploads.urlOf(row)]))

  /** Sellers, categories and banners of many services, one query each (lists never query per row). */
  async function relationsOf(repository: ServicesRepository, rows: ServiceRow[]) {
    const sellerIds = [...new Set(rows.map((row) => row.sellerId))]
    const serviceIds = rows.map((row) => row.id)
    const [sellerById, categories, banners] = await Promise.all([
      users.publicSummariesOf(sellerIds),
      repository.categoriesByIds([...new Set(rows.map((row) => row.categoryId))]),
      urlsByObject('service', serviceIds, 'service_banner'),
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
    const relations = await relationsOf(createServicesRepository(db), rows)
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
      relationsOf(repository, rows),
      repository.packagesOf(ids),
      repository.extrasOf(ids),
      uploads.filesOf('service', ids, 'service_gallery'),
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

  /**
   * Checks what the schema cannot (two decimals, the category exists), then writes the text
   * fields, packages, extras and starting price in the caller's transaction, and binds uploads.
   */
  async function writeOffer(tx: Tx, actor: Actor, fields: ServiceFields, write: (columns: Omit<Partial<ServiceRow>, 'id'>) => Promise<ServiceRow>, galleryFrom: number) {
    const repository = createServicesRepository(tx)
    const prices = priceOffer(fields)
    const problems = [...prices.problems]
    if (!(await repository.findCategory(fields.categoryId))) problems.push({ field: 'categoryId', message: 'does not name a category' })
    if (galleryFrom + (fields.imageIds?.length ?? 0) > GALLERY_LIMIT) problems.push({ field: 'imageIds', message: `a gallery holds at most ${GALLERY_LIMIT} images` })
    if (problems.length > 0) throw validationError(problems)

    // Creating and every edit (re)submit the service for review (DESIGN 6 "Services").
    const row = await write({
      title: fields.title,
      shortDescription: fields.shortDescription ?? '',
      description: fields.description,
      categoryId: fields.categoryId,
      tags: fields.tags ?? [],
      status: 'pending',
      rejectionReason: null,
      startingPriceCents: Math.min(...prices.packages),
      updatedAt: clock.now(),
    })
    await repository.replacePackages(
      row.id,
      fields.packages.map((item, position) => ({
        id: newId(),
        serviceId: row.id,
        position,
        name: item.name,
        description: item.description ?? '',
        priceCents: prices.packages[position]!,
        deliveryDays: item.deliveryDays,
        revisions: item.revisions === 'unlimited' ? null : item.revisions,
        features: item.features ?? [],
      })),
    )
    await repository.replaceExtras(
      row.id,
      (fields.extras ?? []).map((item, position) => ({
        id: newId(),
        serviceId: row.id,
        position,
        title: item.title,
        priceCents: prices.extras[position]!,
        additionalDays: item.additionalDays ?? 0,
      })),
    )
    if (fields.bannerId) await uploads.bindUpload(tx, actor, fields.bannerId, serviceSlot(row.id, 'service_banner'), 'bannerId')
    for (const [index, uploadId] of (fields.imageIds ?? []).entries()) {
      await uploads.bindUpload(tx, actor, uploadId, serviceSlot(row.id, 'service_gallery', galleryFrom + index), `imageIds.${index}`)
    }
    return row
  }

  /** The caller's own live service, or 404: another user's service is "not found" (DESIGN 4). */
  async function ownService(actor: Actor, serviceId: string): Promise<ServiceRow> {
    const row = await createServicesRepository(db).findById(serviceId)
    if (!row || row.deletedAt !== null || !isOwner(row, actor)) throw notFound('Service')
    return row
  }

  const galleryOf = (serviceId: string) => uploads.filesOf('service', [serviceId], 'service_gallery')
  const nextOrder = (files: { order: number }[]) => files.reduce((highest, file) => Math.max(highest, file.order + 1), 0)

  /** Moves one live service from `from` to `to` under a row lock; `check` adds who may do it. */
  function transition(
    serviceId: string,
    move: { from: ServiceStatus; to: ServiceStatus; action: string; rejectionReason?: string },
    check: (row: ServiceRow) => void,
    after?: (tx: Tx, row: ServiceRow) => Promise<unknown>,
  ) {
    return db.transaction(async (tx) => {
      const repository = createServicesRepository(tx)
      const current = await repository.lockById(serviceId)
      if (!current) throw notFound('Service')
      check(current)
      if (current.status !== move.from) throw invalidTransition(current.status, move.action)
      const row = (await repository.update(serviceId, { status: move.to, rejectionReason: move.rejectionReason ?? null, updatedAt: clock.now() }))!
      await after?.(tx, row)
      return row
    })
  }

  /** Runs `change` in one transaction on the caller's own live service, locked; 404 for anyone else. */
  function changeOwnService(actor: Actor, serviceId: string, change: (tx: Tx, row: ServiceRow) => Promise<void>): Promise<ServiceRow> {
    return db.transaction(async (tx) => {
      const current = await createServicesRepository(tx).lockById(serviceId)
      if (!current || current.deletedAt !== null || !isOwner(current, actor)) throw notFound('Service')
      await change(tx, current)
      return current
    })
  }

  const ownedBy = (actor: Actor) => (row: ServiceRow) => {
    if (!isOwner(row, actor)) throw notFound('Service')
  }

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
    /** `POST /services`: a new service, pending review. */
    async createService(actor: Actor, fields: ServiceFields) {
      const now = clock.now()
      const row = await db.transaction(async (tx) => {
        const repository = createServicesRepository(tx)
        const id = newId()
        return writeOffer(tx, actor, fields, (columns) => repository.insert({ ...(columns as Omit<ServiceRow, 'id'>), id, sellerId: actor.id, createdAt: now }), 0)
      })
      return describe(row, actor)
    },

    /** `PUT /services/{id}`: replaces the offer and resubmits it for review. */
    async updateService(actor: Actor, serviceId: string, fields: ServiceFields) {
      await ownService(actor, serviceId)
      // Read before the transaction: the uploads service reads on its own handle.
      const galleryFrom = fields.imageIds?.length ? (await galleryOf(serviceId)).length : 0
      const row = await db.transaction(async (tx) => {
        const repository = createServicesRepository(tx)
        const current = await repository.lockById(serviceId)
        if (!current || !isOwner(current, actor)) throw notFound('Service')
        return writeOffer(tx, actor, fields, async (columns) => (await repository.update(serviceId, columns))!, galleryFrom)
      })
      return describe(row, actor)
    },

    /** Soft delete. Refusing while orders are open (422) arrives with the orders module. */
    async deleteService(actor: Actor, serviceId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const repository = createServicesRepository(tx)
        const current = await repository.lockById(serviceId)
        if (!current || !isOwner(current, actor)) throw notFound('Service')
        const now = clock.now()
        await repository.update(serviceId, { deletedAt: now, updatedAt: now })
      })
    },

    async getService(viewer: Actor | null, serviceId: string) {
      const row = await createServicesRepository(db).findById(serviceId)
      if (!row || !isVisibleTo(row, viewer)) throw notFound('Service')
      return describe(row, viewer)
    },

    pauseService: async (actor: Actor, serviceId: string) => describe(await transition(serviceId, { from: 'active', to: 'paused', action: 'paused' }, ownedBy(actor)), actor),

    resumeService: async (actor: Actor, serviceId: string) => describe(await transition(serviceId, { from: 'paused', to: 'active', action: 'resumed' }, ownedBy(actor)), actor),

    /** `GET /admin/services`: oldest first, so the review queue is worked in order. */
    async listForModeration(viewer: Actor, status: ServiceStatus, page: PageRequest) {
      const { rows, total } = await createServicesRepository(db).listByStatus(status, offsetOf(page), page.limit)
      return toPage(await describeAll(rows, viewer), total, page)
    },

    /** Pending -> active; the `service.approved` event is written in the same transaction. */
    async approveService(actor: Actor, serviceId: string) {
      const row = await transition(
        serviceId,
        { from: 'pending', to: 'active', action: 'approved' },
        () => undefined,
        (tx, approved) => emitEvent(outbox, tx, 'service.approved', { serviceId: approved.id, sellerId: approved.sellerId }, approved.updatedAt),
      )
      return describe(row, actor)
    },

    /** Pending -> rejected with a reason the seller sees; editing the service resubmits it. */
    async rejectService(actor: Actor, serviceId: string, reason: string) {
      return describe(await transition(serviceId, { from: 'pending', to: 'rejected', action: 'rejected', rejectionReason: reason }, () => undefined), actor)
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

    /** `POST /services/{id}/images`: appends gallery images after the current ones. */
    async addImages(actor: Actor, serviceId: string, files: StagedFile[]) {
      await ownService(actor, serviceId)
      const gallery = await galleryOf(serviceId)
      if (gallery.length + files.length > GALLERY_LIMIT) throw fieldError('files', `a gallery holds at most ${GALLERY_LIMIT} images (it has ${gallery.length})`)
      let order = nextOrder(gallery)
      for (const file of files) await uploads.attachFile(actor, file, serviceSlot(serviceId, 'service_gallery', order++), 'files')
      return describe(await ownService(actor, serviceId), actor)
    },

    /** `POST /services/{id}/banner`: replaces (and deletes) the previous banner. */
    async setBanner(actor: Actor, serviceId: string, file: StagedFile) {
      await ownService(actor, serviceId)
      await uploads.attachFile(actor, file, serviceSlot(serviceId, 'service_banner'))
      return describe(await ownService(actor, serviceId), actor)
    },

    /** `DELETE /services/{id}/images/{uploadId}`: removes one gallery image; its bytes are deleted after commit. */
    async removeImage(actor: Actor, serviceId: string, uploadId: string) {
      const row = await changeOwnService(actor, serviceId, async (tx) => {
        if (!(await uploads.detachFile(tx, serviceSlot(serviceId, 'service_gallery'), uploadId))) throw notFound('Image')
      })
      return describe(row, actor)
    },

    /** `PUT /services/{id}/images/order`: `imageIds` must name exactly the current gallery. */
    async reorderImages(actor: Actor, serviceId: string, imageIds: string[]) {
      const row = await changeOwnService(actor, serviceId, (tx) => uploads.reorderFiles(tx, serviceSlot(serviceId, 'service_gallery'), imageIds))
      return describe(row, actor)
    },

    /** Services not soft-deleted per seller, for user lists (one grouped query per page). */
    countServicesBySellers: (sellerIds: string[]) => createServicesRepository(db).countBySellers(sellerIds),
  }
}

export type ServicesService = ReturnType<typeof createServicesService>
