import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { DAY } from '../../lib/clock.ts'
import type { StorageDriver } from '../../platform/storage/storage.ts'
import type { UploadBinding } from './upload-binding.service.ts'
import { createUploadsRepository } from './uploads.repository.ts'

const UNATTACHED_TTL = DAY

/** The upkeep of stored bytes after commits: the storage jobs and the purge of uploads never bound. */
export function createUploadUpkeep(deps: { db: Db; clock: Clock; storage: StorageDriver; binding: Pick<UploadBinding, 'queueByteDeletion'> }) {
  const { db, clock, storage, binding } = deps
  return {
    /**
     * Deletes uploads never bound to anything within 24 hours. Only rows still unbound are deleted
     * (a bind may race the purge), and their bytes are queued for deletion in the same transaction.
     */
    purgeUnattached: (limit = 500): Promise<number> =>
      db.transaction(async (tx) => {
        const uploads = createUploadsRepository(tx)
        const stale = await uploads.listUnattachedBefore(new Date(clock.now().getTime() - UNATTACHED_TTL), limit)
        const removed = await uploads.deleteUnattached(stale.map((row) => row.id))
        await binding.queueByteDeletion(tx, removed)
        return removed.length
      }),

    async moveStoredFile(payload: { uploadId: string; from: string; to: string }): Promise<void> {
      const uploads = createUploadsRepository(db)
      // A file replaced or removed before its move ran is deleted by its own job instead.
      const row = await uploads.findById(payload.uploadId)
      if (!row || row.storageKey !== payload.from) return
      await storage.move(payload.from, payload.to)
      const moved = await uploads.updateStorageKey(payload.uploadId, payload.from, payload.to)
      // The row went away while the bytes were moving: nobody will delete them at their new key.
      if (!moved && !(await uploads.findById(payload.uploadId))) await storage.delete(payload.to)
    },

    async deleteIfOrphan(payload: { key: string }): Promise<void> {
      if (!(await createUploadsRepository(db).isReferenced(payload.key))) await storage.delete(payload.key)
    },

    async deleteStoredFile(payload: { key: string }): Promise<void> {
      await storage.delete(payload.key)
    },
  }
}
