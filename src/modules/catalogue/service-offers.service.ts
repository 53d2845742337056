import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound, validationError, type FieldError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { toCents } from '../../lib/money.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { ServiceBrowsing } from './service-browsing.service.ts'
import type { ServiceCounters } from './service-counters.service.ts'
import { serviceHasOpenOrders } from './catalogue.errors.ts'
import { GALLERY_LIMIT, isOwner, serviceSlot } from './service-rules.ts'
import { createServicesRepository } from './services.repository.ts'
import type { ServiceRow } from './services.table.ts'

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

type OfferPrices = ReturnType<typeof priceOffer>

/** The package rows of a service, priced in cents, in the seller's order. */
function packageRows(serviceId: string, fields: ServiceFields, prices: OfferPrices) {
  return fields.packages.map((item, position) => ({
    id: newId(),
    serviceId,
    position,
    name: item.name,
    description: item.description ?? '',
    priceCents: prices.packages[position]!,
    deliveryDays: item.deliveryDays,
    revisions: item.revisions === 'unlimited' ? null : item.revisions,
    features: item.features ?? [],
  }))
}

/** The extra rows of a service, priced in cents, in the seller's order. */
function extraRows(serviceId: string, fields: ServiceFields, prices: OfferPrices) {
  return (fields.extras ?? []).map((item, position) => ({
    id: newId(),
    serviceId,
    position,
    title: item.title,
    priceCents: prices.extras[position]!,
    additionalDays: item.additionalDays ?? 0,
  }))
}

/**
 * Checks what the schema cannot (two decimals, the category exists, the gallery's room, counted
 * under the service's lock), then writes the text fields, packages, extras and starting price
 * in the caller's transaction, and binds uploads.
 */
async function writeOffer(deps: { clock: Clock; uploads: Pick<UploadsService, 'bindUpload' | 'filesOf'> }, tx: Tx, actor: Actor, fields: ServiceFields, write: (columns: Omit<Partial<ServiceRow>, 'id'>) => Promise<ServiceRow>, serviceId: string | undefined) {
  const { clock, uploads } = deps
  const repository = createServicesRepository(tx)
  const prices = priceOffer(fields)
  const problems = [...prices.problems]
  if (!(await repository.findCategory(fields.categoryId))) problems.push({ field: 'categoryId', message: 'does not name a category' })
  const galleryFrom = serviceId && fields.imageIds?.length ? (await uploads.filesOf(tx, 'service', [serviceId], 'service_gallery')).length : 0
  if (galleryFrom + (fields.imageIds?.length ?? 0) > GALLERY_LIMIT) problems.push({ field: 'imageIds', message: `a gallery holds at most ${GALLERY_LIMIT} images` })
  if (problems.length > 0) throw validationError(problems)

  // The cheapest package (the first of the cheapest) sets the starting price and delivery.
  const cheapest = prices.packages.indexOf(Math.min(...prices.packages))
  // Creating and every edit (re)submit the service for review (decision 0012).
  const row = await write({
    title: fields.title,
    shortDescription: fields.shortDescription ?? '',
    description: fields.description,
    categoryId: fields.categoryId,
    tags: fields.tags ?? [],
    status: 'pending',
    rejectionReason: null,
    startingPriceCents: prices.packages[cheapest]!,
    startingDeliveryDays: fields.packages[cheapest]!.deliveryDays,
    updatedAt: clock.now(),
  })
  await repository.replacePackages(row.id, packageRows(row.id, fields, prices))
  await repository.replaceExtras(row.id, extraRows(row.id, fields, prices))
  if (fields.bannerId) await uploads.bindUpload(tx, actor, fields.bannerId, serviceSlot(row.id, 'service_banner'), 'bannerId')
  for (const [index, uploadId] of (fields.imageIds ?? []).entries()) {
    await uploads.bindUpload(tx, actor, uploadId, { ...serviceSlot(row.id, 'service_gallery'), order: galleryFrom + index }, `imageIds.${index}`)
  }
  return row
}

/** A seller's offer: create, edit (which resubmits it for review) and delete. */
export function createServiceOffers(deps: { db: Db; clock: Clock; uploads: Pick<UploadsService, 'bindUpload' | 'filesOf'>; browsing: Pick<ServiceBrowsing, 'describe'>; counters: Pick<ServiceCounters, 'countOpenOrders'> }) {
  const { db, clock, browsing, counters } = deps

  return {
    /** `POST /services`: a new service, pending review. */
    async createService(actor: Actor, fields: ServiceFields) {
      const now = clock.now()
      const row = await db.transaction(async (tx) => {
        const repository = createServicesRepository(tx)
        const id = newId()
        return writeOffer(deps, tx, actor, fields, (columns) => repository.insert({ ...(columns as Omit<ServiceRow, 'id'>), id, sellerId: actor.id, createdAt: now }), undefined)
      })
      return browsing.describe(row, actor)
    },

    /** `PUT /services/{id}`: replaces the offer and resubmits it for review. */
    async updateService(actor: Actor, serviceId: string, fields: ServiceFields) {
      const row = await db.transaction(async (tx) => {
        const repository = createServicesRepository(tx)
        const current = await repository.lockById(serviceId)
        if (!current || !isOwner(current, actor)) throw notFound('Service')
        return writeOffer(deps, tx, actor, fields, async (columns) => (await repository.update(serviceId, columns))!, serviceId)
      })
      return browsing.describe(row, actor)
    },

    /** Soft delete; refused (422) while the service has open orders, counted under the service's lock. */
    async deleteService(actor: Actor, serviceId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const repository = createServicesRepository(tx)
        const current = await repository.lockById(serviceId)
        if (!current || !isOwner(current, actor)) throw notFound('Service')
        const open = await counters.countOpenOrders(tx, serviceId)
        if (open > 0) throw serviceHasOpenOrders(open)
        const now = clock.now()
        await repository.update(serviceId, { deletedAt: now, updatedAt: now })
      })
    },
  }
}
