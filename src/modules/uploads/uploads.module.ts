import { API_PREFIX } from '../../http/prefix.ts'
import { MINUTE } from '../../lib/clock.ts'
import { defineModule } from '../../platform/module.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import { createUrlSigner } from './signed-urls.ts'
import { STORAGE_JOBS } from './storage-jobs.ts'
import { uploadsRoutes } from './uploads.routes.ts'
import { createUploadsService } from './uploads.service.ts'
import { uploads } from './uploads.table.ts'

/** Files: storage, type checks, binding to objects, serving with access rules and signed links. */
export const uploadsModule = defineModule({
  name: 'uploads',
  needs: [],
  tables: { uploads },
  create: ({ config, db, clock, storage, outbox }) =>
    createUploadsService({
      db,
      clock,
      storage,
      outbox,
      signer: createUrlSigner(config.fileSigning.secret, config.fileSigning.previousSecret),
      filesBaseUrl: `${config.publicUrl}${API_PREFIX}/uploads`,
      tmpDir: config.tmpDir,
      signedUrlTtlSeconds: config.signedUrlTtlSeconds,
    }),
  routes: (api, { config }) => async (app) => {
    await app.register(uploadsRoutes, { uploads: api, tmpDir: config.tmpDir })
  },
  jobs: (api) => [
    handleJob(STORAGE_JOBS.move, (payload) => api.moveStoredFile(payload)),
    handleJob(STORAGE_JOBS.delete, (payload) => api.deleteStoredFile(payload)),
    handleJob(STORAGE_JOBS.deleteIfOrphan, (payload) => api.deleteIfOrphan(payload)),
  ],
  periodic: (api) => [{ name: 'purge-unattached-uploads', everyMs: 15 * MINUTE, run: () => api.purgeUnattached() }],
})

export type { AccessPolicy, StoredFile, UploadsService } from './uploads.service.ts'
export { MAX_UPLOAD_BYTES, TAG_RULES } from './upload-rules.ts'
export { FileReference, PublicFile } from './uploads.schemas.ts'
