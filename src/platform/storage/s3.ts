import type { Readable } from 'node:stream'
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { assertSafeKey, StorageNotFoundError, type ByteRange, type StorageDriver } from './storage.ts'

export interface S3Options {
  bucket: string
  region: string
  endpoint?: string
  /** Where readers reach the bucket, when not at `endpoint` (a server on an internal network): presigned downloads point there. */
  publicEndpoint?: string
  accessKeyId?: string
  secretAccessKey?: string
  /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle: boolean
}

const isMissing = (error: unknown) =>
  error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404)

/** Any S3-compatible object store (AWS S3, MinIO, R2, ...). */
export function createS3Storage(options: S3Options): StorageDriver {
  const clientFor = (endpoint: string | undefined) =>
    new S3Client({
      region: options.region,
      endpoint,
      forcePathStyle: options.forcePathStyle,
      ...(options.accessKeyId && options.secretAccessKey && { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }),
      // Checksums only where S3 requires them: many S3-compatible servers reject the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
  const client = clientFor(options.endpoint)
  // The host is part of the signature: a URL for readers is signed for the address they use.
  const signer = options.publicEndpoint ? clientFor(options.publicEndpoint) : client
  const Bucket = options.bucket

  async function exists(key: string): Promise<boolean> {
    assertSafeKey(key)
    try {
      await client.send(new HeadObjectCommand({ Bucket, Key: key }))
      return true
    } catch (error) {
      if (isMissing(error)) return false
      throw error
    }
  }

  return {
    kind: 's3',

    async put(key, body, { contentType, size }) {
      assertSafeKey(key)
      // The SDK neither rejects nor aborts when the body stream fails; abort the request ourselves.
      const abort = new AbortController()
      body.once('error', (error) => abort.abort(error))
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType, ContentLength: size }), { abortSignal: abort.signal })
    },

    async get(key: string, range?: ByteRange): Promise<Readable> {
      assertSafeKey(key)
      try {
        const result = await client.send(new GetObjectCommand({ Bucket, Key: key, ...(range && { Range: `bytes=${range.start}-${range.end}` }) }))
        return result.Body as Readable
      } catch (error) {
        if (isMissing(error)) throw new StorageNotFoundError(key)
        throw error
      }
    },

    exists,

    async delete(key) {
      assertSafeKey(key)
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }))
    },

    async move(from, to) {
      assertSafeKey(from)
      assertSafeKey(to)
      if (!(await exists(from))) {
        if (await exists(to)) return
        throw new StorageNotFoundError(from)
      }
      await client.send(new CopyObjectCommand({ Bucket, Key: to, CopySource: `${Bucket}/${from.split('/').map(encodeURIComponent).join('/')}` }))
      await client.send(new DeleteObjectCommand({ Bucket, Key: from }))
    },

    // Signed locally (no request to S3); the response-* parameters make S3 answer with our headers.
    signedDownloadUrl(key, { expiresInSeconds, contentType, contentDisposition, cacheControl }) {
      assertSafeKey(key)
      const command = new GetObjectCommand({ Bucket, Key: key, ResponseContentType: contentType, ResponseContentDisposition: contentDisposition, ResponseCacheControl: cacheControl })
      return getSignedUrl(signer, command, { expiresIn: expiresInSeconds })
    },
  }
}
