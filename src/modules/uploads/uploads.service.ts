import { createReadStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { posix } from 'node:path'
import type { Readable } from 'node:stream'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { DAY, HOUR } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { fieldError, notFound } from '../../http/errors.ts'
import type { FileToSend } from '../../http/file-response.ts'
import type { StagedFile } from '../../http/multipart.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { StorageNotFoundError, type ByteRange, type StorageDriver } from '../../platform/storage/storage.ts'
import { can, type Actor } from '../roles/permissions.ts'
import { inspectFile, UnreadableImageError, type InspectedFile } from './file-inspection.ts'
import type { UrlSigner } from './signed-urls.ts'
import { isRaster, MAX_UPLOAD_BYTES, MB, ruleViolation, sanitiseFilename, TAG_RULES } from './upload-rules.ts'
import { createUploadsRepository } from './uploads.repository.ts'
import { uploadTags, type UploadObjectType, type UploadRow, type UploadTag } from './uploads.table.ts'

export const STORAGE_TOPICS = { move: 'storage.move', delete: 'storage.delete', deleteIfOrphan: 'storage.delete_if_orphan' } as const

export interface UploadTarget {
  objectType: UploadObjectType
  objectId: string
  tag: UploadTag
  order?: number
}

/** Decides whether an actor may see the private files of one object (an order, a conversation). */
export type AccessPolicy = (objectId: string, actor: Actor) => Promise<boolean>

export interface UploadsDeps {
  db: Db
  clock: Clock
  storage: StorageDriver
  outbox: Outbox
  signer: UrlSigner
  /** Where files are served, e.g. `https://api.example.com/api/v1/uploads`. */
  filesBaseUrl: string
  tmpDir: string
  signedUrlTtlSeconds: number
}

const UNATTACHED_TTL = DAY
const ORPHAN_GRACE = HOUR

const keyFor = (target: UploadTarget, fileName: string) => `${target.objectType}/${target.objectId}/${target.tag}/${fileName}`

export function createUploadsService(deps: UploadsDeps) {
  const { db, clock, storage, outbox, signer } = deps
  const policies = new Map<UploadObjectType, AccessPolicy>()
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000)

  const isPublic = (row: UploadRow) => row.objectId !== null && row.tag !== null && TAG_RULES[row.tag].isPublic

  function urlOf(row: UploadRow): string {
    const base = `${deps.filesBaseUrl}/${row.path}`
    if (isPublic(row)) return base
    const { expires, signature } = signer.sign(row.path, nowSeconds() + deps.signedUrlTtlSeconds)
    return `${base}?expires=${expires}&signature=${signature}`
  }

  const toUpload = (row: UploadRow) => ({
    id: row.id,
    filename: row.filename,
    size: row.size,
    mimetype: row.mimetype,
    url: urlOf(row),
    tag: row.tag,
    objectType: row.objectType,
    objectId: row.objectId,
    order: row.order,
    createdAt: row.createdAt.toISOString(),
  })

  /** Checks the staged bytes against the tag's rule and re-encodes images; throws a field error. */
  async function inspect(staged: StagedFile, tag: UploadTag | undefined, field: string): Promise<InspectedFile> {
    const rule = tag ? TAG_RULES[tag] : undefined
    let inspected: InspectedFile
    try {
      inspected = await inspectFile(staged.path, deps.tmpDir)
    } catch (error) {
      if (!(error instanceof UnreadableImageError)) throw error
      // A damaged image may still be a legitimate attachment; it is then served as plain bytes.
      if (rule && rule.accepts !== 'any') throw fieldError(field, 'is not a readable image')
      inspected = { path: staged.path, size: staged.size, mimetype: 'application/octet-stream', extension: '', isImage: false }
    }
    // Limits apply to what the client sent (spec section 8), and the type to what was detected.
    const sent = { mimetype: inspected.mimetype, size: Math.max(staged.size, inspected.size) }
    const violation = rule ? ruleViolation(rule, sent) : sent.size > MAX_UPLOAD_BYTES ? `must be at most ${MAX_UPLOAD_BYTES / MB} MB` : undefined
    if (violation) {
      if (inspected.path !== staged.path) await rm(inspected.path, { force: true })
      throw fieldError(field, violation)
    }
    return inspected
  }

  /**
   * Puts the bytes in storage, then records the row with `record` in one transaction. If the
   * transaction fails, the stored bytes are removed again: no orphan bytes.
   */
  async function store<T>(
    actor: Actor,
    staged: StagedFile,
    options: { tag?: UploadTag; target?: UploadTarget; field: string },
    record: (tx: Tx, row: UploadRow) => Promise<T>,
  ): Promise<T> {
    const inspected = await inspect(staged, options.target?.tag ?? options.tag, options.field)
    try {
      const fileName = `${newId()}${inspected.extension}`
      const key = options.target ? keyFor(options.target, fileName) : `tmp/${actor.id}/${fileName}`
      // If the process dies between storing the bytes and recording the row, this sweeps them up.
      await db.transaction((tx) =>
        outbox.enqueue(tx, { topic: STORAGE_TOPICS.deleteIfOrphan, payload: { key }, runAt: new Date(clock.now().getTime() + ORPHAN_GRACE) }),
      )
      await storage.put(key, createReadStream(inspected.path), { contentType: inspected.mimetype, size: inspected.size })
      const now = clock.now()
      const row: UploadRow = {
        id: newId(),
        ownerId: actor.id,
        objectType: options.target?.objectType ?? null,
        objectId: options.target?.objectId ?? null,
        tag: options.target?.tag ?? options.tag ?? null,
        path: key,
        storageKey: key,
        filename: sanitiseFilename(staged.filename),
        mimetype: inspected.mimetype,
        size: inspected.size,
        order: options.target?.order ?? 0,
        createdAt: now,
        updatedAt: now,
      }
      try {
        return await db.transaction((tx) => record(tx, row))
      } catch (error) {
        // Unless the commit went through after all (the connection died after COMMIT).
        const recorded = await createUploadsRepository(db).isReferenced(key).catch(() => true)
        if (!recorded) await storage.delete(key).catch(() => undefined)
        throw error
      }
    } finally {
      if (inspected.path !== staged.path) await rm(inspected.path, { force: true })
    }
  }

  /** Deletes the rows of a single-file slot and queues their bytes for deletion after commit. */
  async function clearSlot(tx: Tx, target: Omit<UploadTarget, 'order'>, keepId?: string): Promise<void> {
    const uploads = createUploadsRepository(tx)
    // Two uploads for one slot at once would otherwise each see the slot empty and both stay.
    await uploads.lockSlot(target.objectType, target.objectId, target.tag)
    const existing = await uploads.listByObject(target.objectType, [target.objectId], target.tag)
    await queueByteDeletion(tx, await uploads.deleteByIds(existing.filter((row) => row.id !== keepId).map((row) => row.id)))
  }

  /** Queues the bytes of deleted rows for deletion after commit. */
  async function queueByteDeletion(tx: Tx, removed: UploadRow[]): Promise<void> {
    // A pending move may not have run yet: the bytes are at one key or the other, so delete both.
    for (const row of removed) {
      for (const key of new Set([row.storageKey, row.path])) await outbox.enqueue(tx, { topic: STORAGE_TOPICS.delete, payload: { key } })
    }
  }

  return {
    toUpload,
    urlOf,

    /** Other modules declare who may see their objects' private files (order or chat participants). */
    registerAccessPolicy(objectType: UploadObjectType, policy: AccessPolicy): void {
      policies.set(objectType, policy)
    },

    /** `POST /uploads`: an unattached file, bound later by sending its id in a field. */
    async createUpload(actor: Actor, staged: StagedFile, tagText: string | undefined) {
      if (tagText !== undefined && !(uploadTags as readonly string[]).includes(tagText)) throw fieldError('tag', `must be one of ${uploadTags.join(', ')}`)
      const tag = tagText as UploadTag | undefined
      return store(actor, staged, { tag, field: 'file' }, async (tx, row) => toUpload(await createUploadsRepository(tx).insert(row)))
    },

    /**
     * Stores a file straight onto its object. For single-file tags (avatar, banner) the previous
     * file is replaced; `inside` runs in the same transaction (e.g. to check the object).
     */
    attachFile: (actor: Actor, staged: StagedFile, target: UploadTarget, field = 'file') =>
      store(actor, staged, { target, field }, async (tx, row) => {
        if (TAG_RULES[target.tag].isSingle) await clearSlot(tx, target)
        return toUpload(await createUploadsRepository(tx).insert(row))
      }),

    /**
     * Binds an unattached upload the actor owns to an object, inside the caller's transaction.
     * Someone else's id, or a file that breaks the tag's rule, is a 400 on `field`.
     */
    async bindUpload(tx: Tx, actor: Actor, uploadId: string, target: UploadTarget, field: string): Promise<UploadRow> {
      const uploads = createUploadsRepository(tx)
      const row = await uploads.lockById(uploadId)
      if (!row || row.ownerId !== actor.id) throw fieldError(field, 'does not name an upload of yours')
      if (row.objectId === target.objectId && row.objectType === target.objectType && row.tag === target.tag) return row
      if (row.objectId !== null) throw fieldError(field, 'names an upload that is already in use')
      const violation = ruleViolation(TAG_RULES[target.tag], row)
      if (violation) throw fieldError(field, violation)
      if (TAG_RULES[target.tag].isSingle) await clearSlot(tx, target, row.id)
      const path = keyFor(target, posix.basename(row.path))
      const bound = await uploads.update(row.id, { ...target, order: target.order ?? 0, path, updatedAt: clock.now() })
      await outbox.enqueue(tx, { topic: STORAGE_TOPICS.move, payload: { uploadId: row.id, from: row.storageKey, to: path } })
      return bound!
    },

    /** Empties a single-file slot (e.g. `avatar: null`) inside the caller's transaction. */
    clearSlot,

    /**
     * Removes one file from an object's slot inside the caller's transaction and queues its bytes
     * for deletion after commit. False when the slot holds no such file.
     */
    async detachFile(tx: Tx, target: Omit<UploadTarget, 'order'>, uploadId: string): Promise<boolean> {
      const uploads = createUploadsRepository(tx)
      await uploads.lockSlot(target.objectType, target.objectId, target.tag)
      const removed = await uploads.deleteFromSlot(uploadId, target.objectType, target.objectId, target.tag)
      if (!removed) return false
      await queueByteDeletion(tx, [removed])
      return true
    },

    /**
     * Sets the order of a multi-file slot (a gallery) to the order of `uploadIds`, inside the
     * caller's transaction. The ids must be exactly the slot's files, each once.
     */
    async reorderFiles(tx: Tx, target: Omit<UploadTarget, 'order'>, uploadIds: string[]): Promise<void> {
      const uploads = createUploadsRepository(tx)
      // Serialised with other reorders and detaches of the slot: two reorders never interleave their writes.
      await uploads.lockSlot(target.objectType, target.objectId, target.tag)
      const current = new Set((await uploads.listByObject(target.objectType, [target.objectId], target.tag)).map((row) => row.id))
      const requested = new Set(uploadIds)
      if (requested.size !== uploadIds.length || requested.size !== current.size || uploadIds.some((id) => !current.has(id))) {
        throw fieldError('imageIds', 'must list exactly the current images')
      }
      const now = clock.now()
      for (const [order, id] of uploadIds.entries()) await uploads.update(id, { order, updatedAt: now })
    },

    async filesOf(objectType: UploadObjectType, objectIds: string[], tag: UploadTag): Promise<UploadRow[]> {
      return createUploadsRepository(db).listByObject(objectType, objectIds, tag)
    },

    /**
     * Finds a file for a reader. Public tags: anyone. Private tags and unattached files: the
     * owner, staff with the tag's permission, those the object's access policy admits, or the
     * holder of a valid signed link. Everyone else gets 404, as if the file did not exist.
     */
    async openFile(path: string, reader: { actor: Actor | null; expires?: number; signature?: string }) {
      const row = await createUploadsRepository(db).findByPath(path)
      if (!row) throw notFound('File')
      const { actor } = reader
      const rule = row.tag ? TAG_RULES[row.tag] : undefined
      const allowed =
        isPublic(row) ||
        (reader.signature !== undefined && reader.expires !== undefined && signer.verify(row.path, reader.expires, reader.signature, nowSeconds())) ||
        (actor !== null && row.ownerId === actor.id) ||
        (actor !== null && row.objectId !== null && rule?.staffPermission !== undefined && can(actor, rule.staffPermission)) ||
        (actor !== null && row.objectType !== null && row.objectId !== null && ((await policies.get(row.objectType)?.(row.objectId, actor)) ?? false))
      if (!allowed) throw notFound('File')
      const inline = isRaster(row.mimetype)
      const file: FileToSend = {
        size: row.size,
        // Only re-encoded raster images show in the page; PDFs download; anything else is opaque bytes.
        contentType: inline || row.mimetype === 'application/pdf' ? row.mimetype : 'application/octet-stream',
        filename: row.filename,
        inline,
        etag: `"${row.id}"`,
        lastModified: row.createdAt,
        // A public path never changes content (a replacement gets a new path), so it caches forever.
        cacheControl: isPublic(row) ? 'public, max-age=31536000, immutable' : 'private, no-store',
        read: async (range?: ByteRange): Promise<Readable> => {
          for (const key of new Set([row.storageKey, row.path])) {
            try {
              return await storage.get(key, range)
            } catch (error) {
              // The bytes may have just moved to their bound path; gone from both means gone.
              if (!(error instanceof StorageNotFoundError)) throw error
            }
          }
          throw notFound('File')
        },
      }
      return file
    },

    /**
     * Deletes uploads never bound to anything within 24 hours. Only rows still unbound are deleted
     * (a bind may race the purge), and their bytes are queued for deletion in the same transaction.
     */
    purgeUnattached: (limit = 500): Promise<number> =>
      db.transaction(async (tx) => {
        const uploads = createUploadsRepository(tx)
        const stale = await uploads.listUnattachedBefore(new Date(clock.now().getTime() - UNATTACHED_TTL), limit)
        const removed = await uploads.deleteUnattached(stale.map((row) => row.id))
        await queueByteDeletion(tx, removed)
        return removed.length
      }),

    async moveStoredFile(payload: { uploadId: string; from: string; to: string }): Promise<void> {
      // A file replaced or removed before its move ran is deleted by its own job instead.
      const row = await createUploadsRepository(db).findById(payload.uploadId)
      if (!row || row.storageKey !== payload.from) return
      await storage.move(payload.from, payload.to)
      const moved = await createUploadsRepository(db).updateStorageKey(payload.uploadId, payload.from, payload.to)
      // The row went away while the bytes were moving: nobody will delete them at their new key.
      if (!moved && !(await createUploadsRepository(db).findById(payload.uploadId))) await storage.delete(payload.to)
    },

    async deleteIfOrphan(payload: { key: string }): Promise<void> {
      if (!(await createUploadsRepository(db).isReferenced(payload.key))) await storage.delete(payload.key)
    },

    async deleteStoredFile(payload: { key: string }): Promise<void> {
      await storage.delete(payload.key)
    },
  }
}

export type UploadsService = ReturnType<typeof createUploadsService>
