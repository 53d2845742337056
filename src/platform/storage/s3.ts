import type { Readable } from 'node:stream'
import type { S3Client } from '@aws-sdk/client-s3'
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

/**
 * The AWS SDK, loaded when an S3 store is first built: an instance storing files on local disk
 * never loads it (it is the largest of the dependencies, some 8 MB of heap).
 */
const loadSdk = () => Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(([s3, presigner]) => ({ ...s3, getSignedUrl: presigner.getSignedUrl }))
type Sdk = Awaited<ReturnType<typeof loadSdk>>

const isMissing = (sdk: Sdk, error: unknown) =>
  error instanceof sdk.S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404)

/** The SDK loaded and the clients built: one for requests, one that signs readers' URLs. */
async function connect(options: S3Options) {
  const sdk = await loadSdk()
  const clientFor = (endpoint: string | undefined): S3Client =>
    new sdk.S3Client({
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
  return { sdk, client, signer }
}

/** Any S3-compatible object store (AWS S3, MinIO, R2, ...). */
export function createS3Storage(options: S3Options): StorageDriver {
  const ready = connect(options)
  // Loading starts with the store. The app awaits `ready()` before it listens, so a store whose SDK
  // cannot load stops the start; until then the rejection is marked handled here.
  ready.catch(() => undefined)
  const Bucket = options.bucket

  async function exists(key: string): Promise<boolean> {
    assertSafeKey(key)
    const { sdk, client } = await ready
    try {
      await client.send(new sdk.HeadObjectCommand({ Bucket, Key: key }))
      return true
    } catch (error) {
      if (isMissing(sdk, error)) return false
      throw error
    }
  }

  return {
    kind: 's3',

    ready: () => ready.then(() => undefined),

    async put(key, body, { contentType, size }) {
      assertSafeKey(key)
      // The SDK neither rejects nor aborts when the body stream fails; abort the request ourselves
      // (listening before the first wait, so a failure while the SDK loads is not left unheard).
      const abort = new AbortController()
      body.once('error', (error) => abort.abort(error))
      let loaded: Awaited<typeof ready>
      try {
        loaded = await ready
        abort.signal.throwIfAborted()
      } catch (error) {
        body.destroy()
        throw error
      }
      const { sdk, client } = loaded
      await client.send(new sdk.PutObjectCommand({ Bucket, Key: key, Body: body, ContentType: contentType, ContentLength: size }), { abortSignal: abort.signal })
    },

    async get(key: string, range?: ByteRange): Promise<Readable> {
      assertSafeKey(key)
      const { sdk, client } = await ready
      try {
        const result = await client.send(new sdk.GetObjectCommand({ Bucket, Key: key, ...(range && { Range: `bytes=${range.start}-${range.end}` }) }))
        return result.Body as Readable
      } catch (error) {
        if (isMissing(sdk, error)) throw new StorageNotFoundError(key)
        throw error
      }
    },

    exists,

    async delete(key) {
      assertSafeKey(key)
      const { sdk, client } = await ready
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }))
    },

    async move(from, to) {
      assertSafeKey(from)
      assertSafeKey(to)
      if (!(await exists(from))) {
        if (await exists(to)) return
        throw new StorageNotFoundError(from)
      }
      const { sdk, client } = await ready
      await client.send(new sdk.CopyObjectCommand({ Bucket, Key: to, CopySource: `${Bucket}/${from.split('/').map(encodeURIComponent).join('/')}` }))
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: from }))
    },

    // Signed locally (no request to S3); the response-* parameters make S3 answer with our headers.
    async signedDownloadUrl(key, { expiresInSeconds, contentType, contentDisposition, cacheControl }) {
      assertSafeKey(key)
      const { sdk, signer } = await ready
      const command = new sdk.GetObjectCommand({ Bucket, Key: key, ResponseContentType: contentType, ResponseContentDisposition: contentDisposition, ResponseCacheControl: cacheControl })
      return sdk.getSignedUrl(signer, command, { expiresIn: expiresInSeconds })
    },
  }
}
