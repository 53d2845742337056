import type { Permission } from '../../access/access.ts'
import type { UploadObjectType, UploadTag } from './uploads.table.ts'

export const MB = 1024 * 1024

/** Raster formats that are decoded and re-encoded (metadata stripped) and may be shown inline. */
export const RASTER_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'] as const
const DOCUMENT_TYPES = [...RASTER_TYPES, 'application/pdf'] as const

export interface TagRule {
  objectType: UploadObjectType
  maxBytes: number
  /** Accepted detected types; `any` accepts every type (still served as an attachment). */
  accepts: readonly string[] | 'any'
  /** Public files are served to anyone; private ones to who may see the object. */
  isPublic: boolean
  /** One file per object: a new one replaces the old. */
  isSingle: boolean
  /** Staff permission that lets staff read private files of this tag. */
  staffPermission?: Permission
}

/** Limits per tag (docs/api-conventions.md). */
export const TAG_RULES: Record<UploadTag, TagRule> = {
  avatar: { objectType: 'user', maxBytes: 5 * MB, accepts: ['image/jpeg', 'image/png'], isPublic: true, isSingle: true },
  service_banner: { objectType: 'service', maxBytes: 10 * MB, accepts: RASTER_TYPES, isPublic: true, isSingle: true },
  service_gallery: { objectType: 'service', maxBytes: 10 * MB, accepts: RASTER_TYPES, isPublic: true, isSingle: false },
  id_document: { objectType: 'identity', maxBytes: 10 * MB, accepts: DOCUMENT_TYPES, isPublic: false, isSingle: false, staffPermission: 'view_kyc' },
  business_document: { objectType: 'identity', maxBytes: 10 * MB, accepts: DOCUMENT_TYPES, isPublic: false, isSingle: false, staffPermission: 'view_kyc' },
  order_delivery: { objectType: 'order', maxBytes: 10 * MB, accepts: 'any', isPublic: false, isSingle: false, staffPermission: 'view_orders' },
  chat_attachment: { objectType: 'chat', maxBytes: 10 * MB, accepts: 'any', isPublic: false, isSingle: false },
}

/** The most any upload may weigh; untagged uploads are checked against their tag when bound. */
export const MAX_UPLOAD_BYTES = Math.max(...Object.values(TAG_RULES).map((rule) => rule.maxBytes))

export const isRaster = (mimetype: string): boolean => (RASTER_TYPES as readonly string[]).includes(mimetype)

export function describeAccepted(rule: TagRule): string {
  if (rule.accepts === 'any') return 'any file'
  return rule.accepts.map((type) => type.replace(/^image\//, '').replace('application/', '').toUpperCase()).join(', ')
}

/** Why a file breaks a tag's rule, or undefined when it fits. */
export function ruleViolation(rule: TagRule, file: { mimetype: string; size: number }): string | undefined {
  if (file.size > rule.maxBytes) return `must be at most ${rule.maxBytes / MB} MB`
  if (rule.accepts !== 'any' && !rule.accepts.includes(file.mimetype)) return `must be one of: ${describeAccepted(rule)}`
  return undefined
}

/** The original name, for display only: no directories, no control characters, bounded. */
export function sanitiseFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? ''
  // eslint-disable-next-line no-control-regex -- stripping control characters is the point
  const cleaned = base.normalize('NFC').replace(/[\u0000-\u001f\u007f"<>]/g, '').trim().slice(0, 200)
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'file' : cleaned
}
