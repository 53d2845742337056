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
