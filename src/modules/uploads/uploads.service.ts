import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Actor } from '../../access/access.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { StorageDriver } from '../../platform/storage/storage.ts'
import type { UrlSigner } from './signed-urls.ts'
import { createUploadBinding } from './upload-binding.service.ts'
import { createUploadServing } from './upload-serving.service.ts'
import { createUploadStorage } from './upload-storage.service.ts'
import type { UploadTag } from './uploads.table.ts'

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

/**
 * The uploads module's API: serving (URLs, reads, access policies), binding (attach and detach
 * inside a caller's transaction) and storage (bytes in, bytes out), each in its own file.
 */
export function createUploadsService(deps: UploadsDeps) {
  const serving = createUploadServing(deps)
  const binding = createUploadBinding(deps)
  const storage = createUploadStorage({ ...deps, binding })

  return {
    ...serving,
    ...binding,
    ...storage,

    /** `POST /uploads`: an unattached file, bound later by sending its id in a field. */
    async createUpload(actor: Actor, staged: StagedFile, tag: UploadTag | undefined) {
      return serving.toUpload(await storage.storeUnattached(actor, staged, tag))
    },
  }
}

export type UploadsService = ReturnType<typeof createUploadsService>
export type { AccessPolicy } from './upload-serving.service.ts'
export type { StoredFile } from './upload-storage.service.ts'
