import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startS3, S3RVER_CREDENTIALS, type TestS3 } from '../../../test/setup/s3.ts'
import { createLocalStorage } from './local.ts'
import { createS3Storage } from './s3.ts'
import { StorageNotFoundError, type StorageDriver } from './storage.ts'

interface Harness {
  storage: StorageDriver
  /** Every stored key, sorted, read behind the driver's back. */
  keys(): Promise<string[]>
  stop(): Promise<void>
}

const listFiles = (root: string): string[] =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort()

async function localHarness(): Promise<Harness & { parent: string }> {
  // The root sits inside a parent of its own, so an escape would land somewhere the test can see.
  const parent = mkdtempSync(join(tmpdir(), 'marketplace-storage-'))
  const root = join(parent, 'uploads')
  return {
    parent,
    storage: createLocalStorage(root),
    keys: async () => listFiles(parent).map((path) => (path.startsWith('uploads/') ? path.slice('uploads/'.length) : `(outside root) ${path}`)),
    stop: async () => rmSync(parent, { recursive: true, force: true }),
  }
}

async function s3Harness(): Promise<Harness> {
  const s3: TestS3 = await startS3()
  return {
    storage: createS3Storage({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, ...S3RVER_CREDENTIALS }),
    keys: () => s3.listKeys(),
    stop: () => s3.stop(),
  }
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string))
  return Buffer.concat(chunks)
}

const bytes = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz')
const put = (storage: StorageDriver, key: string, body: Buffer = bytes) =>
  storage.put(key, Readable.from([body.subarray(0, 10), body.subarray(10)]), { contentType: 'application/octet-stream', size: body.length })

const UNSAFE_KEYS = ['../x', '/abs', 'a/../b', '..', './a', 'a/./b', 'a//b', 'a/', '', '.hidden', 'a/.hidden', 'a\\..\\b', 'a b', 'tmp/%2e%2e/x', 'a/b\u0000c']

describe.each([
  ['local', localHarness],
  ['s3', s3Harness],
] as const)('storage contract: %s driver', (kind, start) => {
  let harness: Harness
  let storage: StorageDriver
  beforeAll(async () => {
    harness = await start()
    storage = harness.storage
  })
  afterAll(() => harness.stop())

  it('reports which driver it is', () => {
    expect(storage.kind).toBe(kind)
  })

  it('stores a stream under a key and gives the same bytes back', async () => {
    await put(storage, 'user/u1/avatar/a.png')
    expect(await harness.keys()).toContain('user/u1/avatar/a.png')
    expect(await storage.exists('user/u1/avatar/a.png')).toBe(true)
    expect(await readAll(await storage.get('user/u1/avatar/a.png'))).toEqual(bytes)
  })

  it('leaves no temporary or partial files beside what it stored', async () => {
    await put(storage, 'clean/one.bin')
    expect((await harness.keys()).filter((key) => key.startsWith('clean/'))).toEqual(['clean/one.bin'])
  })

  it('replaces the bytes when the same key is stored again', async () => {
    await put(storage, 'replace/me.txt')
    await put(storage, 'replace/me.txt', Buffer.from('second version'))
    expect((await readAll(await storage.get('replace/me.txt'))).toString()).toBe('second version')
    expect((await harness.keys()).filter((key) => key.startsWith('replace/'))).toEqual(['replace/me.txt'])
  })

  it('reads one inclusive byte range', async () => {
    await put(storage, 'range/file.bin')
    expect((await readAll(await storage.get('range/file.bin', { start: 0, end: 9 }))).toString()).toBe('0123456789')
    expect((await readAll(await storage.get('range/file.bin', { start: 10, end: 12 }))).toString()).toBe('abc')
    expect((await readAll(await storage.get('range/file.bin', { start: 35, end: 35 }))).toString()).toBe('z')
  })

  it('says whether a key exists', async () => {
    await put(storage, 'exists/yes.bin')
    expect(await storage.exists('exists/yes.bin')).toBe(true)
    expect(await storage.exists('exists/no.bin')).toBe(false)
    // A "directory" that only prefixes stored keys is not itself a stored object.
    expect(await storage.exists('exists')).toBe(false)
  })

  it('throws StorageNotFoundError for a missing key, with or without a range', async () => {
    await expect(storage.get('missing/nothing.png')).rejects.toBeInstanceOf(StorageNotFoundError)
    await expect(storage.get('missing/nothing.png', { start: 0, end: 3 })).rejects.toBeInstanceOf(StorageNotFoundError)
  })

  it('deletes a key, and deleting it again (or a key never stored) is not an error', async () => {
    await put(storage, 'delete/me.bin')
    await storage.delete('delete/me.bin')
    expect(await storage.exists('delete/me.bin')).toBe(false)
    await expect(storage.get('delete/me.bin')).rejects.toBeInstanceOf(StorageNotFoundError)
    await expect(storage.delete('delete/me.bin')).resolves.toBeUndefined()
    await expect(storage.delete('delete/never-stored.bin')).resolves.toBeUndefined()
    expect((await harness.keys()).filter((key) => key.startsWith('delete/'))).toEqual([])
  })

  it('moves a key to another, creating its folders, and the source is gone', async () => {
    await put(storage, 'tmp/owner/file.png')
    await storage.move('tmp/owner/file.png', 'user/u2/avatar/file.png')
    expect(await storage.exists('tmp/owner/file.png')).toBe(false)
    expect(await readAll(await storage.get('user/u2/avatar/file.png'))).toEqual(bytes)
    expect((await harness.keys()).filter((key) => key.includes('file.png'))).toEqual(['user/u2/avatar/file.png'])
  })

  it('treats a move whose source is gone but whose target exists as already done', async () => {
    await put(storage, 'tmp/owner/twice.png')
    await storage.move('tmp/owner/twice.png', 'user/u3/avatar/twice.png')
    await expect(storage.move('tmp/owner/twice.png', 'user/u3/avatar/twice.png')).resolves.toBeUndefined()
    expect(await readAll(await storage.get('user/u3/avatar/twice.png'))).toEqual(bytes)
  })

  it('refuses to move a key that exists nowhere (StorageNotFoundError)', async () => {
    await expect(storage.move('tmp/owner/ghost.png', 'user/u4/avatar/ghost.png')).rejects.toBeInstanceOf(StorageNotFoundError)
    expect(await storage.exists('user/u4/avatar/ghost.png')).toBe(false)
  })

  it('stores nothing when the incoming stream fails half-way', async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.from('half of the file'))
        this.destroy(new Error('client went away'))
      },
    })
    await expect(storage.put('failed/upload.bin', failing, { contentType: 'application/octet-stream', size: 1000 })).rejects.toThrow()
    expect(await storage.exists('failed/upload.bin')).toBe(false)
    expect((await harness.keys()).filter((key) => key.startsWith('failed/'))).toEqual([])
  })

  it.each(UNSAFE_KEYS)('rejects the unsafe key %j in every operation', async (key) => {
    const before = await harness.keys()
    await expect(put(storage, key)).rejects.toThrow(/unsafe storage key/)
    await expect(storage.get(key)).rejects.toThrow(/unsafe storage key/)
    await expect(storage.exists(key)).rejects.toThrow(/unsafe storage key/)
    await expect(storage.delete(key)).rejects.toThrow(/unsafe storage key/)
    await expect(storage.move(key, 'safe/target.bin')).rejects.toThrow(/unsafe storage key/)
    await expect(storage.move('safe/source.bin', key)).rejects.toThrow(/unsafe storage key/)
    expect(await harness.keys()).toEqual(before)
  })

  it('never reads or removes a stored file through a traversing key', async () => {
    await put(storage, 'victim/secret.txt', Buffer.from('secret'))
    await expect(storage.get('other/../victim/secret.txt')).rejects.toThrow(/unsafe storage key/)
    await expect(storage.delete('other/../victim/secret.txt')).rejects.toThrow(/unsafe storage key/)
    await expect(storage.move('other/../victim/secret.txt', 'stolen/secret.txt')).rejects.toThrow(/unsafe storage key/)
    expect((await readAll(await storage.get('victim/secret.txt'))).toString()).toBe('secret')
    expect(await storage.exists('stolen/secret.txt')).toBe(false)
  })
})

describe('presigned downloads', () => {
  let harness: Harness
  beforeAll(async () => {
    harness = await s3Harness()
  })
  afterAll(() => harness.stop())

  it('S3 signs a GET, valid for the given time, that the bucket answers with our headers, ranges included', async () => {
    await put(harness.storage, 'order/o1/order_delivery/file.bin')
    const headers = { contentType: 'application/octet-stream', contentDisposition: 'attachment; filename="report.bin"', cacheControl: 'private, no-store' }
    const url = await harness.storage.signedDownloadUrl!('order/o1/order_delivery/file.bin', { ...headers, expiresInSeconds: 60 })
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('60')

    const whole = await fetch(url)
    expect(whole.status).toBe(200)
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(bytes)
    expect(whole.headers.get('content-type')).toBe(headers.contentType)
    expect(whole.headers.get('content-disposition')).toBe(headers.contentDisposition)
    expect(whole.headers.get('cache-control')).toBe(headers.cacheControl)

    const part = await fetch(url, { headers: { range: 'bytes=0-9' } })
    expect(part.status).toBe(206)
    expect(await part.text()).toBe('0123456789')

  })

  it('signs for the public address of a bucket the API reaches at an internal one', async () => {
    const storage = createS3Storage({ bucket: 'files', region: 'us-east-1', endpoint: 'http://minio:9000', publicEndpoint: 'https://files.example.test', forcePathStyle: true, ...S3RVER_CREDENTIALS })
    const url = new URL(await storage.signedDownloadUrl!('a/b.bin', { contentType: 'application/pdf', contentDisposition: 'attachment', cacheControl: 'private, no-store', expiresInSeconds: 60 }))
    expect(url.origin).toBe('https://files.example.test')
    expect(url.pathname).toBe('/files/a/b.bin')
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/)
  })

  it('the local driver has none: its files are served by the API', async () => {
    const local = await localHarness()
    try {
      expect('signedDownloadUrl' in local.storage).toBe(false)
    } finally {
      await local.stop()
    }
  })
})
