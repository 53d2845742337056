import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { StoredFile, UploadsService } from '../uploads/uploads.module.ts'
import type { ServiceBrowsing } from './service-browsing.service.ts'
import { GALLERY_LIMIT, isOwner, serviceSlot } from './service-rules.ts'
import { createServicesRepository } from './services.repository.ts'
import type { ServiceRow } from './services.table.ts'

type GalleryUploads = Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles' | 'detachFile' | 'reorderFiles' | 'filesOf'>

/** A service's images: the gallery (add, remove, reorder) and the banner. */
export function createServiceGallery(deps: { db: Db; uploads: GalleryUploads; browsing: Pick<ServiceBrowsing, 'describe'> }) {
  const { db, uploads, browsing } = deps

  /** Runs `change` in one transaction on the caller's own live service, locked; 404 for anyone else. */
  function changeOwnService(actor: Actor, serviceId: string, change: (tx: Tx, row: ServiceRow) => Promise<void>): Promise<ServiceRow> {
    return db.transaction(async (tx) => {
      const current = await createServicesRepository(tx).lockById(serviceId)
      if (!current || !isOwner(current, actor)) throw notFound('Service')
      await change(tx, current)
      return current
    })
  }

  /** Unknown, deleted or someone else's service: 404 before anything about it is read or stored (existence never leaks). */
  async function assertOwnLiveService(actor: Actor, serviceId: string): Promise<void> {
    const owned = await createServicesRepository(db).findById(serviceId)
    if (!owned || owned.deletedAt !== null || !isOwner(owned, actor)) throw notFound('Service')
  }

  /**
   * Stores the files' bytes first (storage is never written inside a transaction), then records
   * them in one transaction with the service locked: all of them or none, and `record` decides
   * under the lock (the gallery's room). The bytes are deleted again if that transaction fails.
   */
  async function attachToOwnService(actor: Actor, serviceId: string, files: StagedFile[], tag: 'service_gallery' | 'service_banner', field: string, record: (tx: Tx, stored: StoredFile[]) => Promise<void>) {
    await assertOwnLiveService(actor, serviceId)
    const stored = await uploads.storeFiles(actor, files, serviceSlot(serviceId, tag), field)
    try {
      return await changeOwnService(actor, serviceId, (tx) => record(tx, stored))
    } catch (error) {
      await uploads.discardFiles(stored)
      throw error
    }
  }

  return {
    /** `POST /services/{id}/images`: appends gallery images after the current ones, all or none. */
    async addImages(actor: Actor, serviceId: string, files: StagedFile[]) {
      // A full gallery is refused before any file is processed; the count that decides is taken under the lock.
      await assertOwnLiveService(actor, serviceId)
      const current = await uploads.filesOf(db, 'service', [serviceId], 'service_gallery')
      if (current.length + files.length > GALLERY_LIMIT) throw fieldError('files', `a gallery holds at most ${GALLERY_LIMIT} images (it has ${current.length})`)
      const row = await attachToOwnService(actor, serviceId, files, 'service_gallery', 'files', async (tx, stored) => {
        const gallery = await uploads.filesOf(tx, 'service', [serviceId], 'service_gallery')
        if (gallery.length + stored.length > GALLERY_LIMIT) throw fieldError('files', `a gallery holds at most ${GALLERY_LIMIT} images (it has ${gallery.length})`)
        const nextOrder = gallery.reduce((highest, file) => Math.max(highest, file.order + 1), 0)
        await uploads.recordFiles(tx, stored, nextOrder)
      })
      return browsing.describe(row, actor)
    },

    /** `POST /services/{id}/banner`: replaces (and deletes) the previous banner. */
    async setBanner(actor: Actor, serviceId: string, file: StagedFile) {
      const row = await attachToOwnService(actor, serviceId, [file], 'service_banner', 'file', async (tx, stored) => {
        await uploads.recordFiles(tx, stored)
      })
      return browsing.describe(row, actor)
    },

    /** `DELETE /services/{id}/images/{uploadId}`: removes one gallery image; its bytes are deleted after commit. */
    async removeImage(actor: Actor, serviceId: string, uploadId: string) {
      const row = await changeOwnService(actor, serviceId, async (tx) => {
        if (!(await uploads.detachFile(tx, serviceSlot(serviceId, 'service_gallery'), uploadId))) throw notFound('Image')
      })
      return browsing.describe(row, actor)
    },

    /** `PUT /services/{id}/images/order`: `imageIds` must name exactly the current gallery. */
    async reorderImages(actor: Actor, serviceId: string, imageIds: string[]) {
      const row = await changeOwnService(actor, serviceId, (tx) => uploads.reorderFiles(tx, serviceSlot(serviceId, 'service_gallery'), imageIds))
      return browsing.describe(row, actor)
    },
  }
}
