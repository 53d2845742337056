import { can, type Actor } from '../../access/access.ts'
import type { ServiceRow } from './services.table.ts'

/** A gallery holds at most this many images (decision 0012). */
export const GALLERY_LIMIT = 10

export const serviceSlot = (serviceId: string, tag: 'service_banner' | 'service_gallery') => ({ objectType: 'service', objectId: serviceId, tag }) as const

export const mayModerate = (actor: Actor | null): boolean => actor !== null && can(actor, 'view_services')
export const isOwner = (row: Pick<ServiceRow, 'sellerId'>, actor: Actor | null): boolean => actor !== null && row.sellerId === actor.id

/** Active is public; any other state only for its owner and staff with view_services, 404 to others (decision 0012). */
export const isVisibleTo = (row: Pick<ServiceRow, 'sellerId' | 'status' | 'deletedAt'>, viewer: Actor | null): boolean =>
  row.deletedAt === null && (row.status === 'active' || isOwner(row, viewer) || mayModerate(viewer))

/**
 * The facet bands of starting price, in cents, each bound included (decision 0207): a band's
 * `from` and `to` are a list's `minPrice` and `maxPrice` for it, and no price falls in two.
 */
export const priceBands = [
  { key: '0-25', fromCents: 0, toCents: 2499 },
  { key: '25-50', fromCents: 2500, toCents: 4999 },
  { key: '50-100', fromCents: 5000, toCents: 9999 },
  { key: '100-250', fromCents: 10000, toCents: 24999 },
  { key: '250-500', fromCents: 25000, toCents: 49999 },
  { key: '500+', fromCents: 50000, toCents: null },
] as const

/** The facet bands of the cheapest package's delivery, in days, each bound included. */
export const deliveryBands = [
  { key: '1', from: 1, to: 1 },
  { key: '2-3', from: 2, to: 3 },
  { key: '4-7', from: 4, to: 7 },
  { key: '8+', from: 8, to: null },
] as const
