import type { Readable } from 'node:stream'
import type { AnyColumn, SQL } from 'drizzle-orm'
import { can, type Actor } from '../../access/access.ts'
import type { Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import type { FileToSend } from '../../platform/files.ts'
import { StorageNotFoundError, type ByteRange, type StorageDriver } from '../../platform/storage/storage.ts'
import type { UrlSigner } from './signed-urls.ts'
import { isRaster, TAG_RULES } from './upload-rules.ts'
import { createUploadsRepository, publicFilesJsonSql, publicFileUrlSql } from './uploads.repository.ts'
import type { UploadObjectType, UploadRow, UploadTag } from './uploads.table.ts'
import type { PublicFile } from './uploads.schemas.ts'

/** How long a presigned download stays valid: only its start must fall within it. */
const SIGNED_DOWNLOAD_SECONDS = 60

/** Decides whether an actor may see the private files of one object (an order, a conversation). */
export type AccessPolicy = (objectId: string, actor: Actor) => Promise<boolean>

export interface ServingDeps {
  clock: Clock
  storage: StorageDriver
  signer: UrlSigner
  /** Where files are served, e.g. `https://api.example.com/api/v1/uploads`. */
  filesBaseUrl: string
  signedUrlTtlSeconds: number
}

const isPublic = (row: UploadRow) => row.objectId !== null && row.tag !== null && TAG_RULES[row.tag].isPublic

/** Public tags only: their URLs need no signature, so PostgreSQL can build them. */
function publicOnly(tag: UploadTag): void {
  if (!TAG_RULES[tag].isPublic) throw new Error(`${tag} files are private: their URLs are signed per request`)
}

/** How a file its reader may see is sent: its headers, and where its bytes are read from. */
function fileToSend(row: UploadRow, storage: StorageDriver, signedDownloadUrl: StorageDriver['signedDownloadUrl']): FileToSend {
  const inline = isRaster(row.mimetype)
  return {
    size: row.size,
    // Only re-encoded raster images show in the page; PDFs download; anything else is opaque bytes.
    contentType: inline || row.mimetype === 'application/pdf' ? row.mimetype : 'application/octet-stream',
    filename: row.filename,
    inline,
    etag: `"${row.id}"`,
    lastModified: row.createdAt,
    // A public path never changes content (a replacement gets a new path), so it caches forever.
    cacheControl: isPublic(row) ? 'public, max-age=31536000, immutable' : 'private, no-store',
    // Private bytes on S3 go from the bucket to the reader, not through this process.
    elsewhere:
      signedDownloadUrl && !isPublic(row)
        ? async (headers) => {
            // While a move to the bound path is under way, the bytes are at one key or the other.
            const key = row.storageKey === row.path || !(await storage.exists(row.storageKey)) ? row.path : row.storageKey
            return signedDownloadUrl(key, { ...headers, expiresInSeconds: SIGNED_DOWNLOAD_SECONDS })
          }
        : undefined,
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
}

/** Reading files: their URLs (signed when private), the files of objects, and serving them to who may see them. */
export function createUploadServing(deps: ServingDeps & { db: Executor }) {
  const { db, clock, storage, signer } = deps
  const signedDownloadUrl = storage.signedDownloadUrl?.bind(storage)
  const policies = new Map<UploadObjectType, AccessPolicy>()
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000)

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

  return {
    urlOf,
    toUpload,

    /**
     * For another module's one-statement reads: the URL of the first file of a public tag of the
     * object in column `objectId` (null when none), as `urlOf` would give it.
     */
    publicFileUrlSql(objectType: UploadObjectType, objectId: AnyColumn | SQL, tag: UploadTag): SQL<string | null> {
      publicOnly(tag)
      return publicFileUrlSql(deps.filesBaseUrl, objectType, objectId, tag)
    },

    /** The same for every file of the tag, as a JSON array of `{ id, url, order }` in their order. */
    publicFilesJsonSql(objectType: UploadObjectType, objectId: AnyColumn | SQL, tag: UploadTag): SQL<PublicFile[]> {
      publicOnly(tag)
      return publicFilesJsonSql(deps.filesBaseUrl, objectType, objectId, tag)
    },

    /** Other modules declare who may see their objects' private files (order or chat participants). */
    registerAccessPolicy(objectType: UploadObjectType, policy: AccessPolicy): void {
      policies.set(objectType, policy)
    },

    /** The files of one tag of many objects, in their order: one query whatever the number of objects. */
    filesOf: (executor: Executor, objectType: UploadObjectType, objectIds: string[], tag: UploadTag): Promise<UploadRow[]> =>
      createUploadsRepository(executor).listByObject(objectType, objectIds, tag),

    /** Files by id (a page of chat messages names its attachments), in one query. */
    filesByIds: (executor: Executor, ids: string[]): Promise<UploadRow[]> => createUploadsRepository(executor).listByIds(ids),

    /**
     * Finds a file for a reader. Public tags: anyone. Private tags and unattached files: the
     * owner, staff with the tag's permission, those the object's access policy admits, or the
     * holder of a valid signed link. Everyone else gets 404, as if the file did not exist.
     */
    async openFile(path: string, reader: { actor: Actor | null; expires?: number; signature?: string }): Promise<FileToSend> {
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
      return fileToSend(row, storage, signedDownloadUrl)
    },
  }
}

export type UploadServing = ReturnType<typeof createUploadServing>
