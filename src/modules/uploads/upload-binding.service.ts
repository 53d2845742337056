import { posix } from 'node:path'
import type { Actor } from '../../access/access.ts'
import type { Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError } from '../../lib/errors.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { STORAGE_JOBS } from './storage-jobs.ts'
import { ruleViolation, TAG_RULES } from './upload-rules.ts'
import { createUploadsRepository } from './uploads.repository.ts'
import type { UploadObjectType, UploadRow, UploadTag } from './uploads.table.ts'

export interface UploadTarget {
  objectType: UploadObjectType
  objectId: string
  tag: UploadTag
  order?: number
}

export const keyFor = (target: UploadTarget, fileName: string): string => `${target.objectType}/${target.objectId}/${target.tag}/${fileName}`

/** Attaching files to objects and detaching them, always inside the caller's transaction. */
export function createUploadBinding(deps: { clock: Clock; outbox: Outbox }) {
  const { clock, outbox } = deps

  /** Queues the bytes of deleted rows for deletion after commit. */
  async function queueByteDeletion(tx: Tx, removed: UploadRow[]): Promise<void> {
    // A pending move may not have run yet: the bytes are at one key or the other, so delete both.
    for (const row of removed) {
      for (const key of new Set([row.storageKey, row.path])) await outbox.add(tx, STORAGE_JOBS.delete, { key })
    }
  }

  /** Deletes the rows of a single-file slot (keeping `keepId`) and queues their bytes for deletion. */
  async function clearSlot(tx: Tx, target: Omit<UploadTarget, 'order'>, keepId?: string): Promise<void> {
    const uploads = createUploadsRepository(tx)
    // Two uploads for one slot at once would otherwise each see the slot empty and both stay.
    await uploads.lockSlot(target.objectType, target.objectId, target.tag)
    const existing = await uploads.listByObject(target.objectType, [target.objectId], target.tag)
    await queueByteDeletion(tx, await uploads.deleteByIds(existing.filter((row) => row.id !== keepId).map((row) => row.id)))
  }

  return {
    queueByteDeletion,
    clearSlot,

    /**
     * Binds an unattached upload the actor owns to an object. Someone else's id, or a file that
     * breaks the tag's rule, is a 400 on `field`.
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
      await outbox.add(tx, STORAGE_JOBS.move, { uploadId: row.id, from: row.storageKey, to: path })
      return bound!
    },

    /** Removes one file from an object's slot and queues its bytes for deletion; false when the slot holds no such file. */
    async detachFile(tx: Tx, target: Omit<UploadTarget, 'order'>, uploadId: string): Promise<boolean> {
      const uploads = createUploadsRepository(tx)
      await uploads.lockSlot(target.objectType, target.objectId, target.tag)
      const removed = await uploads.deleteFromSlot(uploadId, target.objectType, target.objectId, target.tag)
      if (!removed) return false
      await queueByteDeletion(tx, [removed])
      return true
    },

    /** Sets the order of a multi-file slot (a gallery) to the order of `uploadIds`, which must be exactly its files. */
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
  }
}

export type UploadBinding = ReturnType<typeof createUploadBinding>
