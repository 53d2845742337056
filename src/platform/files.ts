import type { Readable } from 'node:stream'
import type { ByteRange, DownloadHeaders } from './storage/storage.ts'

/** A file received from a multipart body, staged on disk (never held whole in memory). */
export interface StagedFile {
  path: string
  /** The client's name for it, untrusted. */
  filename: string
  size: number
}

/** A stored file on its way to a reader: what `http/file-response.ts` needs to send it safely. */
export interface FileToSend {
  size: number
  contentType: string
  filename: string
  /** Raster images may be shown in the page; everything else downloads. */
  inline: boolean
  etag: string
  lastModified: Date
  cacheControl: string
  read(range?: ByteRange): Promise<Readable>
  /**
   * Where the store serves the bytes itself (a presigned S3 URL valid for a minute), for private
   * files on S3: the reader is sent there instead of through this process.
   */
  elsewhere?: (headers: DownloadHeaders) => Promise<string>
}
