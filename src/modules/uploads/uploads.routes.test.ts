import { existsSync, readdirSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../app.ts'
import type { Database } from '../../db/client.ts'
import { HOUR, ManualClock, SECOND } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { createStorage } from '../../platform/storage/create-storage.ts'
import type { StorageDriver } from '../../platform/storage/storage.ts'
import { users } from '../users/users.table.ts'
import {
  decompressionBomb,
  fileForm,
  hasGpsExif,
  html,
  jpegWithGps,
  largePng,
  MB,
  multipart,
  opaqueBytes,
  pdf,
  png,
  svg,
  text,
  truncatedPng,
  type MultipartRequest,
} from '../../../test/factories/files.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { startS3, type TestS3 } from '../../../test/setup/s3.ts'
import { API, createTestApp, fieldsOf, MemoryMailer, request, testConfig, type ErrorJson, type TestContext } from '../../../test/setup/test-app.ts'
import { uploads, type UploadRow } from './uploads.table.ts'

type Driver = 'local' | 's3'

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const UPLOAD_KEYS = ['createdAt', 'filename', 'id', 'mimetype', 'objectId', 'objectType', 'order', 'size', 'tag', 'url']

/** Images are generated once for the whole file: both drivers upload the same bytes. */
interface Fixtures {
  png: Buffer
  otherPng: Buffer
  jpegWithGps: Buffer
  truncatedPng: Buffer
  bomb: Buffer
  pdf: Buffer
  sixMbPng: Buffer
  sixMbBytes: Buffer
  elevenMbBytes: Buffer
  thirtyMbBytes: Buffer
}
let fixtures: Fixtures

beforeAll(async () => {
  fixtures = {
    png: await png(),
    otherPng: await png({ width: 32, height: 32, seed: 5 }),
    jpegWithGps: await jpegWithGps(),
    truncatedPng: await truncatedPng(),
    bomb: decompressionBomb(),
    pdf: pdf(),
    sixMbPng: await largePng(6 * MB),
    sixMbBytes: opaqueBytes(6 * MB, 1),
    elevenMbBytes: opaqueBytes(11 * MB, 2),
    thirtyMbBytes: opaqueBytes(30 * MB, 3),
  }
  // The fixtures are what they claim to be, before any of them reaches the API.
  expect((await sharp(fixtures.png).metadata()).format).toBe('png')
  expect(await hasGpsExif(fixtures.jpegWithGps)).toBe(true)
  const bomb = await sharp(fixtures.bomb, { limitInputPixels: false }).metadata()
  expect([bomb.format, bomb.width, bomb.height]).toEqual(['png', 20_000, 20_000])
  expect(fixtures.bomb.length).toBeLessThan(200 * 1024)
  expect(fixtures.sixMbPng.length).toBeGreaterThan(5 * MB)
  expect(fixtures.sixMbPng.length).toBeLessThan(10 * MB)
})

/**
 * test-app's drop() ends the pool and at once drops the database `with (force)`. pg-pool resolves
 * end() before its clients have disconnected, and a client already removed from the pool has no
 * error listener left, so PostgreSQL's 57P01 (terminating connection) would surface as an uncaught
 * exception. Only that teardown error is tolerated; any other still throws.
 */
function tolerateTeardownDisconnects(database: Database): void {
  if (database.kind !== 'postgres') return
  database.pool.on('connect', (client) => {
    client.on('error', (error: Error & { code?: string }) => {
      if (error.code !== '57P01') throw error
    })
  })
}

/** Files under a directory, relative to it, sorted; none when it does not exist yet. */
const listFiles = (root: string): string[] =>
  existsSync(root)
    ? readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
        .sort()
    : []

/** The path and query of an absolute URL the API returned, for app.inject. */
const localPart = (url: string): string => {
  const parsed = new URL(url)
  return `${parsed.pathname}${parsed.search}`
}

/** The stored path of a file URL (`/api/v1/uploads/<path>`), without the query. */
const pathOfUrl = (url: string): string => new URL(url).pathname.slice(`${API}/uploads/`.length)

const expectFieldError = (response: LightMyRequestResponse, field: string, message?: RegExp): void => {
  expect(response.statusCode).toBe(400)
  const body = response.json<ErrorJson>()
  expect(body.success).toBe(false)
  expect(body.error.code).toBe('VALIDATION_ERROR')
  expect(fieldsOf(response)).toEqual([field])
  if (message) expect(body.error.details[0]!.message).toMatch(message)
}

/** What a download answered, from the API or, after its redirect, from the bucket. */
type Downloaded = Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'rawPayload' | 'body' | 'json'> & {
  /** The API's 302 when the bucket served the bytes. */
  redirect?: LightMyRequestResponse
}

const expectNotFound = (response: Downloaded): void => {
  expect(response.statusCode).toBe(404)
  expect(response.json<ErrorJson>().error.code).toBe('NOT_FOUND')
}

describe.each<Driver>(['local', 's3'])('uploads on %s storage', (driver) => {
  let s3: TestS3 | undefined
  let ctx: TestContext

  beforeAll(async () => {
    if (driver === 's3') s3 = await startS3()
    ctx = await createTestApp({ env: s3?.env })
    tolerateTeardownDisconnects(ctx.database)
    expect(ctx.config.storage.kind).toBe(driver)
  })
  afterAll(async () => {
    await ctx.close()
    await s3?.stop()
  })

  /** Every stored object, read behind the API's back: files on disk or keys in the bucket. */
  const storedKeys = async (): Promise<string[]> => {
    if (s3) return s3.listKeys()
    if (ctx.config.storage.kind !== 'local') throw new Error('expected local storage')
    return listFiles(ctx.config.storage.dir)
  }
  const rows = (): Promise<UploadRow[]> => ctx.database.db.select().from(uploads)
  const rowById = async (id: string): Promise<UploadRow | undefined> => (await ctx.database.db.select().from(uploads).where(eq(uploads.id, id)))[0]
  const stagedFiles = (): string[] => listFiles(ctx.config.tmpDir)
  const jobs = () => ctx.database.db.select().from(outboxJobs)
  /** Storage jobs (moves, deletions) that did not succeed and mention a key or id. */
  const unfinishedStorageJobs = async (mention: string) =>
    (await jobs()).filter(
      (job) => job.topic.startsWith('storage.') && job.status !== 'done' && JSON.stringify(job.payload).includes(mention),
    )

  const upload = (form: MultipartRequest, token?: string) => request(ctx.app, { method: 'POST', url: '/uploads', token, payload: form.payload, headers: form.headers })
  const uploadAvatar = (form: MultipartRequest, token?: string) =>
    request(ctx.app, { method: 'POST', url: '/users/me/avatar', token, payload: form.payload, headers: form.headers })
  const patchMe = (token: string, payload: Record<string, unknown>, method: 'PATCH' | 'PUT' = 'PATCH') => request(ctx.app, { method, url: '/users/me', token, payload })
  const me = async (token: string) => (await request(ctx.app, { method: 'GET', url: '/users/me', token })).json().data
  /**
   * GETs a URL the API returned (or a raw path under /api/v1/uploads/), and follows a redirect to
   * the bucket as a browser would, with the same headers but no credentials of the API.
   */
  const download = async (url: string, options: { token?: string; headers?: Record<string, string> } = {}): Promise<Downloaded> => {
    const response = await ctx.app.inject({
      method: 'GET',
      url: url.startsWith('http') ? localPart(url) : url,
      headers: { ...options.headers, ...(options.token && { authorization: `Bearer ${options.token}` }) },
    })
    if (response.statusCode !== 302) return response
    const location = response.headers.location as string
    expect(location.startsWith(s3!.endpoint), location).toBe(true)
    const fetched = await fetch(location, { headers: options.headers })
    const rawPayload = Buffer.from(await fetched.arrayBuffer())
    const body = rawPayload.toString('utf8')
    return { statusCode: fetched.status, headers: Object.fromEntries(fetched.headers), rawPayload, body, json: () => JSON.parse(body), redirect: response }
  }

  /**
   * A GET over a real socket with the path sent exactly as written: app.inject (like a browser)
   * resolves dot segments before the server sees them, which would hide a traversal.
   */
  let address: string | undefined
  async function rawGet(path: string): Promise<{ status: number; body: string }> {
    address ??= await ctx.app.listen({ host: '127.0.0.1', port: 0 })
    const { hostname, port } = new URL(address)
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest({ host: hostname, port, path, method: 'GET', agent: false }, (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
        response.on('error', reject)
      })
      outgoing.on('error', reject)
      outgoing.end()
    })
  }

  /**
   * A private file went out safely: from this process with headers that stop a browser from
   * sniffing or running it; or, on S3, through a redirect no cache keeps and no referrer leaks,
   * to a presigned URL that lasts a minute (the bucket's answer carries our type and disposition).
   */
  function expectDeliveredSafely(served: Downloaded): void {
    if (driver === 's3') {
      expect(served.redirect?.statusCode).toBe(302)
      expect(served.redirect?.headers['cache-control']).toBe('private, no-store')
      expect(served.redirect?.headers['referrer-policy']).toBe('no-referrer')
      expect(new URL(served.redirect!.headers.location as string).searchParams.get('X-Amz-Expires')).toBe('60')
      return
    }
    expect(served.redirect).toBeUndefined()
    expect(served.headers['x-content-type-options']).toBe('nosniff')
    expect(served.headers['content-security-policy']).toContain('sandbox')
  }

  /** Uploads a file and returns the 201 payload. */
  async function stored(user: TestUser, content: Buffer, options: Parameters<typeof fileForm>[1] = {}) {
    const response = await upload(fileForm(content, options), user.accessToken)
    expect(response.statusCode, response.body).toBe(201)
    return response.json().data as { id: string; url: string; size: number; mimetype: string; filename: string; tag: string | null }
  }

  /** Runs a refused request and checks that it left no row, no stored bytes and no staged file. */
  async function expectRefusedWithoutTrace(send: () => Promise<LightMyRequestResponse>, field: string, message?: RegExp): Promise<void> {
    const rowsBefore = await rows()
    const keysBefore = await storedKeys()
    const jobsBefore = await jobs()
    const response = await send()
    expectFieldError(response, field, message)
    expect(await rows()).toEqual(rowsBefore)
    expect(await storedKeys()).toEqual(keysBefore)
    expect(await jobs()).toEqual(jobsBefore)
    expect(stagedFiles()).toEqual([])
  }

  describe('POST /uploads', () => {
    it('stores an unattached PNG for its owner (201) and answers its id, filename, size, mimetype and URL', async () => {
      const owner = await createUser(ctx)
      const response = await upload(fileForm(fixtures.png, { filename: 'holiday.png', contentType: 'image/png' }), owner.accessToken)
      expect(response.statusCode).toBe(201)
      const body = response.json()
      expect(body.success).toBe(true)
      const data = body.data
      expect(Object.keys(data).sort()).toEqual(UPLOAD_KEYS)
      expect(data).toMatchObject({
        filename: 'holiday.png',
        mimetype: 'image/png',
        tag: null,
        objectType: null,
        objectId: null,
        order: 0,
        createdAt: ctx.clock.now().toISOString(),
      })
      expect(data.id).toMatch(new RegExp(`^${UUID}$`))

      const row = await rowById(data.id)
      expect(row).toMatchObject({ ownerId: owner.user.id, objectType: null, objectId: null, tag: null, filename: 'holiday.png', mimetype: 'image/png', size: data.size })
      expect(row!.path).toMatch(new RegExp(`^tmp/${owner.user.id}/${UUID}\\.png$`))
      expect(row!.storageKey).toBe(row!.path)
      // An unattached file is private: its URL is a signed, expiring link.
      const expires = Math.floor(ctx.clock.now().getTime() / 1000) + ctx.config.signedUrlTtlSeconds
      expect(data.url).toMatch(new RegExp(`^${ctx.config.publicUrl}/api/v1/uploads/${row!.path}\\?expires=${expires}&signature=[\\w-]+$`))

      expect(await storedKeys()).toContain(row!.path)
      const served = await download(data.url)
      expect(served.statusCode).toBe(200)
      expect(served.rawPayload.length).toBe(data.size)
      expect(stagedFiles()).toEqual([])
    })

    it('keeps the tag sent with an upload, which stays unattached until bound', async () => {
      const owner = await createUser(ctx)
      const data = await stored(owner, await png({ seed: 21 }), { filename: 'chat.png', tag: 'chat_attachment' })
      expect(data).toMatchObject({ tag: 'chat_attachment' })
      expect(await rowById(data.id)).toMatchObject({ tag: 'chat_attachment', objectType: null, objectId: null })
      // Browsers send fields in form order: a tag after the file counts as well.
      const late = multipart([
        { name: 'file', filename: 'late.png', content: await png({ seed: 22 }), contentType: 'image/png' },
        { name: 'tag', value: 'order_delivery' },
      ])
      const response = await upload(late, owner.accessToken)
      expect(response.statusCode).toBe(201)
      expect(response.json().data.tag).toBe('order_delivery')
    })

    it('refuses an anonymous upload (401 UNAUTHENTICATED) and stores nothing', async () => {
      const rowsBefore = await rows()
      const keysBefore = await storedKeys()
      for (const token of [undefined, 'not-a-token']) {
        const response = await upload(fileForm(fixtures.png, { filename: 'a.png' }), token)
        expect(response.statusCode).toBe(401)
        expect(response.json<ErrorJson>().error.code).toBe('UNAUTHENTICATED')
      }
      expect(await rows()).toEqual(rowsBefore)
      expect(await storedKeys()).toEqual(keysBefore)
      expect(stagedFiles()).toEqual([])
    })

    it('re-encodes a PNG: the stored bytes decode as PNG and anything smuggled after the image is gone', async () => {
      const owner = await createUser(ctx)
      const polyglot = Buffer.concat([fixtures.png, Buffer.from('<html><script>alert(1)</script></html>')])
      const data = await stored(owner, polyglot, { filename: 'smuggler.png' })
      const bytes = (await download(data.url)).rawPayload
      const metadata = await sharp(bytes).metadata()
      expect([metadata.format, metadata.width, metadata.height]).toEqual(['png', 64, 48])
      expect(bytes.includes(Buffer.from('<script>'))).toBe(false)
      expect(data.size).toBe(bytes.length)
    })

    it('removes the GPS position from a JPEG while keeping it a JPEG', async () => {
      const owner = await createUser(ctx)
      const data = await stored(owner, fixtures.jpegWithGps, { filename: 'IMG_0001.JPG', contentType: 'image/jpeg' })
      expect(data.mimetype).toBe('image/jpeg')
      const bytes = (await download(data.url)).rawPayload
      const metadata = await sharp(bytes).metadata()
      expect([metadata.format, metadata.width, metadata.height]).toEqual(['jpeg', 64, 48])
      expect(await hasGpsExif(bytes)).toBe(false)
      expect(bytes.includes(Buffer.from('TestPhone'))).toBe(false)
    })

    it('takes the type from the bytes: a PNG named photo.pdf and sent as application/pdf is stored as image/png with .png', async () => {
      const owner = await createUser(ctx)
      const data = await stored(owner, fixtures.png, { filename: 'photo.pdf', contentType: 'application/pdf' })
      expect(data).toMatchObject({ mimetype: 'image/png', filename: 'photo.pdf' })
      const row = await rowById(data.id)
      expect(row!.path).toMatch(/\.png$/)
      expect(await storedKeys()).toContain(row!.path)
      const served = await download(data.url)
      expect(served.headers['content-type']).toBe('image/png')
    })

    it('sanitises the original file name: no directories, no control characters', async () => {
      const owner = await createUser(ctx)
      const traversal = await stored(owner, await png({ seed: 31 }), { filename: '../../etc/passwd' })
      expect(traversal.filename).toBe('passwd')
      const backslashes = await stored(owner, await png({ seed: 32 }), { filename: '..\\..\\windows\\win.ini' })
      expect(backslashes.filename).toBe('win.ini')
      const control = await stored(owner, await png({ seed: 33 }), { filename: 'bad\u0001na\u001fme\u007f.png' })
      expect(control.filename).toBe('badname.png')
      for (const data of [traversal, backslashes, control]) {
        const row = await rowById(data.id)
        expect(row!.filename).toBe(data.filename)
        // The stored path is generated, never derived from the client's name.
        expect(row!.path).toMatch(new RegExp(`^tmp/${owner.user.id}/${UUID}\\.png$`))
      }
      const served = await download(control.url)
      expect(served.headers['content-disposition']).toBe('inline; filename="badname.png"')
      const accented = await stored(owner, await png({ seed: 34 }), { filename: 'résumé été.png' })
      expect(accented.filename).toBe('résumé été.png')
    })

    it('accepts a GIF as a gallery image (re-encoded, still a GIF) but not as an avatar', async () => {
      const owner = await createUser(ctx)
      const gif = await sharp(fixtures.png).gif().toBuffer()
      const data = await stored(owner, gif, { filename: 'anim.gif', tag: 'service_gallery' })
      expect(data.mimetype).toBe('image/gif')
      expect((await rowById(data.id))!.path).toMatch(/\.gif$/)
      expect((await sharp((await download(data.url)).rawPayload).metadata()).format).toBe('gif')
      await expectRefusedWithoutTrace(() => upload(fileForm(gif, { filename: 'anim.gif', tag: 'avatar' }), owner.accessToken), 'file', /JPEG, PNG/)
    })

    it('refuses an HTML file named x.jpg and sent as image/jpeg for an avatar (400 on file)', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(html(), { filename: 'x.jpg', contentType: 'image/jpeg', tag: 'avatar' }), owner.accessToken), 'file', /JPEG, PNG/)
    })

    it('never accepts an SVG as a gallery image (400 on file)', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(svg(), { filename: 'logo.svg', contentType: 'image/svg+xml', tag: 'service_gallery' }), owner.accessToken), 'file')
    })

    it('refuses a truncated PNG for an avatar (400 on file)', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(
        () => upload(fileForm(fixtures.truncatedPng, { filename: 'half.png', contentType: 'image/png', tag: 'avatar' }), owner.accessToken),
        'file',
        /readable image/,
      )
    })

    it.each(['avatar', 'service_gallery', 'service_banner'])('refuses a decompression bomb tagged %s (400 on file)', async (tag) => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.bomb, { filename: 'bomb.png', contentType: 'image/png', tag }), owner.accessToken), 'file')
    })

    it('refuses an empty file (400 on file)', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(Buffer.alloc(0), { filename: 'empty.png' }), owner.accessToken), 'file', /empty/)
    })

    it('refuses a file sent in another field than `file` (400 on file)', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.png, { filename: 'a.png', field: 'upload' }), owner.accessToken), 'file')
    })

    it('refuses two files where one is expected (400 on file), keeping neither', async () => {
      const owner = await createUser(ctx)
      const form = multipart([
        { name: 'file', filename: 'one.png', content: fixtures.png, contentType: 'image/png' },
        { name: 'file', filename: 'two.png', content: fixtures.otherPng, contentType: 'image/png' },
      ])
      await expectRefusedWithoutTrace(() => upload(form, owner.accessToken), 'file', /exactly one/)
    })

    it('requires a file part (400 on file), also when the form is empty', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(multipart([{ name: 'tag', value: 'avatar' }]), owner.accessToken), 'file')
      await expectRefusedWithoutTrace(() => upload(multipart([]), owner.accessToken), 'file')
    })

    it('refuses a body cut off in the middle of the file (400 on file)', async () => {
      const owner = await createUser(ctx)
      const form = fileForm(fixtures.png, { filename: 'cut.png' })
      const cut = { ...form, payload: form.payload.subarray(0, form.payload.length - 200) }
      await expectRefusedWithoutTrace(() => upload(cut, owner.accessToken), 'file')
    })

    it('refuses an unknown tag (400 on tag) after reading the file, and keeps nothing', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.png, { filename: 'a.png', tag: 'profile_picture' }), owner.accessToken), 'tag')
    })

    it('refuses more than 5 MB for an avatar (400 on file)', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.sixMbBytes, { filename: 'big.jpg', tag: 'avatar' }), owner.accessToken), 'file', /5 MB/)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.sixMbPng, { filename: 'big.png', tag: 'avatar' }), owner.accessToken), 'file', /5 MB/)
    })

    it('refuses a file over 10 MB with or without a tag (400 on file)', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.elevenMbBytes, { filename: 'big.bin' }), owner.accessToken), 'file', /10 MB/)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.elevenMbBytes, { filename: 'big.bin', tag: 'chat_attachment' }), owner.accessToken), 'file', /10 MB/)
    })

    it('stops reading a 30 MB body at the cap (400 on file) and keeps nothing', async () => {
      const owner = await createUser(ctx)
      await expectRefusedWithoutTrace(() => upload(fileForm(fixtures.thirtyMbBytes, { filename: 'huge.bin', tag: 'order_delivery' }), owner.accessToken), 'file', /10 MB/)
    })

    it('accepts 6 MB of any type for a chat attachment, under the 10 MB limit', async () => {
      const owner = await createUser(ctx)
      const data = await stored(owner, fixtures.sixMbBytes, { filename: 'archive.bin', tag: 'chat_attachment' })
      expect(data).toMatchObject({ size: fixtures.sixMbBytes.length, mimetype: 'application/octet-stream', tag: 'chat_attachment' })
      const row = await rowById(data.id)
      // An unknown type gets no extension.
      expect(row!.path).toMatch(new RegExp(`^tmp/${owner.user.id}/${UUID}$`))
      expect((await download(data.url)).rawPayload.equals(fixtures.sixMbBytes)).toBe(true)
    })

    it('answers 415 UNSUPPORTED_MEDIA_TYPE to a body that is not multipart', async () => {
      const owner = await createUser(ctx)
      const rowsBefore = await rows()
      const keysBefore = await storedKeys()
      const response = await request(ctx.app, { method: 'POST', url: '/uploads', token: owner.accessToken, payload: { file: 'aGVsbG8=', tag: 'avatar' } })
      expect(response.statusCode).toBe(415)
      expect(response.json<ErrorJson>().error.code).toBe('UNSUPPORTED_MEDIA_TYPE')
      expect(await rows()).toEqual(rowsBefore)
      expect(await storedKeys()).toEqual(keysBefore)
    })
  })

  describe('GET /uploads/<path>', () => {
    it('serves a public avatar to anyone with safe, cacheable headers', async () => {
      const owner = await createUser(ctx)
      const response = await uploadAvatar(fileForm(fixtures.png, { filename: 'me.png', contentType: 'image/png' }), owner.accessToken)
      expect(response.statusCode).toBe(200)
      const url = response.json().data.avatar as string
      expect(url).not.toContain('?')

      const served = await download(url)
      expect(served.statusCode).toBe(200)
      expect(served.headers['content-type']).toBe('image/png')
      expect(served.headers['x-content-type-options']).toBe('nosniff')
      expect(served.headers['content-disposition']).toBe('inline; filename="me.png"')
      expect(served.headers['content-security-policy']).toContain('sandbox')
      expect(served.headers['content-security-policy']).toContain("default-src 'none'")
      expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(served.headers['accept-ranges']).toBe('bytes')
      const etag = served.headers.etag as string
      expect(etag).toMatch(/^".+"$/)
      expect(Number(served.headers['content-length'])).toBe(served.rawPayload.length)
      expect((await sharp(served.rawPayload).metadata()).format).toBe('png')

      const again = await download(url, { headers: { 'if-none-match': etag } })
      expect(again.statusCode).toBe(304)
      expect(again.rawPayload.length).toBe(0)
      const changed = await download(url, { headers: { 'if-none-match': '"something-else"' } })
      expect(changed.statusCode).toBe(200)
    })

    it('answers conditional requests as HTTP defines them: weak and listed tags, If-Modified-Since, and Range under If-Range', async () => {
      const owner = await createUser(ctx)
      const url = (await uploadAvatar(fileForm(fixtures.png, { filename: 'me.png' }), owner.accessToken)).json().data.avatar as string
      const first = await download(url)
      const etag = first.headers.etag as string
      const lastModified = first.headers['last-modified'] as string
      const whole = first.rawPayload
      const status = async (headers: Record<string, string>) => (await download(url, { headers })).statusCode

      expect(await status({ 'if-none-match': `W/${etag}` })).toBe(304)
      expect(await status({ 'if-none-match': `"another", ${etag}` })).toBe(304)
      expect(await status({ 'if-none-match': '*' })).toBe(304)
      expect(await status({ 'if-none-match': '"another", W/"more"' })).toBe(200)
      expect(await status({ 'if-modified-since': lastModified })).toBe(304)
      expect(await status({ 'if-modified-since': new Date(Date.parse(lastModified) + HOUR).toUTCString() })).toBe(304)
      expect(await status({ 'if-modified-since': new Date(Date.parse(lastModified) - HOUR).toUTCString() })).toBe(200)
      // An entity tag that does not match wins over a date that would.
      expect(await status({ 'if-none-match': '"another"', 'if-modified-since': lastModified })).toBe(200)

      const ranged = async (ifRange: string) => {
        const response = await download(url, { headers: { range: 'bytes=0-9', 'if-range': ifRange } })
        return { status: response.statusCode, length: response.rawPayload.length }
      }
      expect(await ranged(etag)).toEqual({ status: 206, length: 10 })
      expect(await ranged(lastModified)).toEqual({ status: 206, length: 10 })
      // The file changed since the client's copy (or the tag is weak): the whole file, not a piece.
      expect(await ranged('"another"')).toEqual({ status: 200, length: whole.length })
      expect(await ranged(`W/${etag}`)).toEqual({ status: 200, length: whole.length })
      expect(await ranged(new Date(Date.parse(lastModified) - HOUR).toUTCString())).toEqual({ status: 200, length: whole.length })
      const stale = await download(url, { headers: { range: 'bytes=999999-', 'if-range': '"another"' } })
      expect(stale.statusCode).toBe(200)
      expect(stale.rawPayload).toEqual(whole)
    })

    it('answers a byte range with 206 and an unsatisfiable one with 416 RANGE_NOT_SATISFIABLE', async () => {
      const owner = await createUser(ctx)
      const url = (await uploadAvatar(fileForm(fixtures.png, { filename: 'me.png' }), owner.accessToken)).json().data.avatar as string
      const whole = (await download(url)).rawPayload

      const first = await download(url, { headers: { range: 'bytes=0-9' } })
      expect(first.statusCode).toBe(206)
      expect(first.headers['content-range']).toBe(`bytes 0-9/${whole.length}`)
      expect(first.headers['content-length']).toBe('10')
      expect(first.rawPayload).toEqual(whole.subarray(0, 10))
      expect(first.rawPayload.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))

      const tail = await download(url, { headers: { range: 'bytes=-5' } })
      expect(tail.statusCode).toBe(206)
      expect(tail.headers['content-range']).toBe(`bytes ${whole.length - 5}-${whole.length - 1}/${whole.length}`)
      expect(tail.rawPayload).toEqual(whole.subarray(whole.length - 5))

      // Several ranges, or a header that is not a byte range, get the whole file.
      for (const range of ['bytes=0-1,5-6', 'bytes=abc', 'pages=1-2']) {
        const whole200 = await download(url, { headers: { range } })
        expect([range, whole200.statusCode]).toEqual([range, 200])
        expect(whole200.rawPayload).toEqual(whole)
      }

      const outside = await download(url, { headers: { range: 'bytes=999999-' } })
      expect(outside.statusCode).toBe(416)
      expect(outside.json<ErrorJson>().error.code).toBe('RANGE_NOT_SATISFIABLE')
      expect(outside.headers['content-range']).toBe(`bytes */${whole.length}`)
    })

    it.each([
      ['without a tag', undefined],
      ['tagged chat_attachment', 'chat_attachment'],
      ['tagged order_delivery', 'order_delivery'],
      ['tagged id_document', 'id_document'],
      ['tagged avatar but not yet bound', 'avatar'],
    ])(
      'serves a private upload (%s) only to its owner or by a valid signed URL; everyone else gets 404',
      async (_label, tag) => {
        const owner = await createUser(ctx)
        const stranger = await createUser(ctx)
        const data = await stored(owner, await png({ seed: 41 }), { filename: 'private.png', tag })
        const path = pathOfUrl(data.url)
        const bare = `${API}/uploads/${path}`

        expectNotFound(await download(bare))
        expectNotFound(await download(bare, { token: stranger.accessToken }))
        expectNotFound(await download(bare, { token: 'not-a-token' }))

        const byOwner = await download(bare, { token: owner.accessToken })
        expect(byOwner.statusCode).toBe(200)
        expect(byOwner.headers['cache-control']).toBe('private, no-store')
        expectDeliveredSafely(byOwner)

        const signed = await download(data.url)
        expect(signed.statusCode).toBe(200)
        expect(signed.rawPayload).toEqual(byOwner.rawPayload)

        const url = new URL(data.url)
        const signature = url.searchParams.get('signature')!
        const expires = Number(url.searchParams.get('expires'))
        const forged = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`
        expectNotFound(await download(`${bare}?expires=${expires}&signature=${forged}`))
        expectNotFound(await download(`${bare}?expires=${expires + 3600}&signature=${signature}`))
        expectNotFound(await download(`${bare}?expires=${expires}`))
        expectNotFound(await download(`${bare}?signature=${signature}`))

        // A valid signature for one file opens no other file.
        const other = await stored(owner, await png({ seed: 42 }), { filename: 'other.png', tag })
        expectNotFound(await download(`${API}/uploads/${pathOfUrl(other.url)}?expires=${expires}&signature=${signature}`))

        ctx.clock.advance((ctx.config.signedUrlTtlSeconds + 1) * SECOND)
        expectNotFound(await download(data.url))
      },
    )

    it('serves a PDF as an attachment with its own type', async () => {
      const owner = await createUser(ctx)
      const data = await stored(owner, fixtures.pdf, { filename: 'invoice.pdf', contentType: 'application/pdf', tag: 'order_delivery' })
      expect(data.mimetype).toBe('application/pdf')
      const served = await download(data.url)
      expect(served.statusCode).toBe(200)
      expect(served.headers['content-type']).toBe('application/pdf')
      expect(served.headers['content-disposition']).toBe('attachment; filename="invoice.pdf"')
      expectDeliveredSafely(served)
      expect(served.rawPayload).toEqual(fixtures.pdf)
    })

    it.each([
      ['a text file', text(), 'notes.txt', 'text/plain'],
      ['an HTML page', html(), 'page.html', 'text/html'],
      ['an SVG', svg(), 'drawing.svg', 'image/svg+xml'],
    ])('serves %s as a download with a type no browser renders', async (_label, content, filename, contentType) => {
      const owner = await createUser(ctx)
      const data = await stored(owner, content, { filename, contentType, tag: 'chat_attachment' })
      expect(data.mimetype).not.toMatch(/html|svg|text|javascript/)
      const served = await download(data.url)
      expect(served.statusCode).toBe(200)
      expect(served.headers['content-type']).toBe('application/octet-stream')
      expect(served.headers['content-disposition']).toBe(`attachment; filename="${filename}"`)
      expectDeliveredSafely(served)
      expect(served.rawPayload).toEqual(content)
    })

    it('keeps a damaged image sent without an image tag only as opaque bytes, served as a download', async () => {
      const owner = await createUser(ctx)
      const data = await stored(owner, fixtures.truncatedPng, { filename: 'half.png', tag: 'chat_attachment' })
      expect(data.mimetype).toBe('application/octet-stream')
      const served = await download(data.url)
      expect(served.headers['content-type']).toBe('application/octet-stream')
      expect(served.headers['content-disposition']).toBe('attachment; filename="half.png"')
    })

    it.each([
      `${API}/uploads/../../etc/passwd`,
      `${API}/uploads/../../../../../../../../etc/passwd`,
      `${API}/uploads/..%2F..%2Fetc%2Fpasswd`,
      `${API}/uploads/%2e%2e/%2e%2e/etc/passwd`,
      `${API}/uploads/%2e%2e%2f%2e%2e%2fetc%2fpasswd`,
      `${API}/uploads/%252e%252e%252fetc%252fpasswd`,
      `${API}/uploads//etc/passwd`,
      `${API}/uploads/%2Fetc%2Fpasswd`,
      `${API}/uploads/..\\..\\etc\\passwd`,
      `${API}/uploads/tmp/../../../../../../etc/passwd`,
    ])('never serves anything outside the uploads for the raw path %s (404)', async (path) => {
      const response = await rawGet(path)
      expect(response.status).toBe(404)
      expect(JSON.parse(response.body).error.code).toBe('NOT_FOUND')
      expect(response.body).not.toContain('root:')
    })

    it('does not reach a stored file through a path that only resolves to it', async () => {
      const owner = await createUser(ctx)
      const url = (await uploadAvatar(fileForm(fixtures.png, { filename: 'me.png' }), owner.accessToken)).json().data.avatar as string
      const path = pathOfUrl(url)
      expect((await rawGet(`${API}/uploads/${path}`)).status).toBe(200)
      const detours = [`user/../${path}`, `./${path}`, `tmp/../${path}`, `${path}/.`, `/${path}`]
      if (ctx.config.storage.kind === 'local') detours.push(join(ctx.config.storage.dir, path))
      for (const detour of detours) {
        const response = await rawGet(`${API}/uploads/${detour}`)
        expect([detour, response.status]).toEqual([detour, 404])
      }
    })

    it('answers 404 for a path that names no upload', async () => {
      expectNotFound(await download(`${API}/uploads/user/0190a0b0-0000-7000-8000-000000000000/avatar/0190a0b0-0000-7000-8000-000000000001.png`))
      expectNotFound(await download(`${API}/uploads/nothing-here`))
    })
  })

  describe('avatars', () => {
    it('sets the avatar from POST /users/me/avatar and serves it at the returned public URL', async () => {
      const owner = await createUser(ctx)
      const response = await uploadAvatar(fileForm(fixtures.png, { filename: 'face.png', contentType: 'image/png' }), owner.accessToken)
      expect(response.statusCode).toBe(200)
      const user = response.json().data
      expect(user).toMatchObject({ id: owner.user.id, email: owner.user.email })
      expect(user.avatar).toMatch(new RegExp(`^${ctx.config.publicUrl}/api/v1/uploads/user/${owner.user.id}/avatar/${UUID}\\.png$`))

      const [row] = await ctx.database.db.select().from(uploads).where(eq(uploads.path, pathOfUrl(user.avatar)))
      expect(row).toMatchObject({ ownerId: owner.user.id, objectType: 'user', objectId: owner.user.id, tag: 'avatar', filename: 'face.png', mimetype: 'image/png' })
      expect(row!.storageKey).toBe(row!.path)
      expect(await storedKeys()).toContain(row!.path)

      const served = await download(user.avatar)
      expect(served.statusCode).toBe(200)
      expect((await sharp(served.rawPayload).metadata()).format).toBe('png')
      expect(stagedFiles()).toEqual([])
    })

    it('replaces the previous avatar: its row goes at once, its bytes once the worker runs', async () => {
      const owner = await createUser(ctx)
      const firstUrl = (await uploadAvatar(fileForm(fixtures.png, { filename: 'one.png' }), owner.accessToken)).json().data.avatar as string
      const firstPath = pathOfUrl(firstUrl)
      const second = await uploadAvatar(fileForm(fixtures.jpegWithGps, { filename: 'two.jpg' }), owner.accessToken)
      expect(second.statusCode).toBe(200)
      const secondUrl = second.json().data.avatar as string
      expect(secondUrl).toMatch(/\.jpg$/)
      expect(secondUrl).not.toBe(firstUrl)

      const avatars = await ctx.database.db.select().from(uploads).where(eq(uploads.objectId, owner.user.id))
      expect(avatars.map((row) => row.path)).toEqual([pathOfUrl(secondUrl)])
      expectNotFound(await download(firstUrl))
      expect(await storedKeys()).toContain(firstPath)

      await ctx.app.container.worker.drain()
      expect(await storedKeys()).not.toContain(firstPath)
      expect(await storedKeys()).toContain(pathOfUrl(secondUrl))
      expect((await me(owner.accessToken)).avatar).toBe(secondUrl)
      expect(await hasGpsExif((await download(secondUrl)).rawPayload)).toBe(false)
    })

    it('keeps exactly one avatar when several avatar uploads of one user arrive at once', async () => {
      const owner = await createUser(ctx)
      const forms = await Promise.all([71, 72, 73, 74, 75, 76].map(async (seed) => fileForm(await png({ seed }), { filename: `race-${seed}.png` })))
      // Sent together, so their transactions overlap (on PostgreSQL they run on separate connections).
      const responses = await Promise.all(forms.map((form) => uploadAvatar(form, owner.accessToken)))
      expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200, 200])
      const avatars = await ctx.database.db.select().from(uploads).where(eq(uploads.objectId, owner.user.id))
      expect(avatars).toHaveLength(1)
      await ctx.app.container.worker.drain()
      expect((await storedKeys()).filter((key) => key.startsWith(`user/${owner.user.id}/avatar/`))).toEqual([avatars[0]!.path])
      expect((await me(owner.accessToken)).avatar).toBe(`${ctx.config.publicUrl}/api/v1/uploads/${avatars[0]!.path}`)
    })

    it.each([
      ['a PDF', () => fixtures.pdf, 'cv.pdf', /JPEG, PNG/],
      ['a 6 MB image', () => fixtures.sixMbPng, 'huge.png', /5 MB/],
      ['an HTML file named .png', html, 'x.png', /JPEG, PNG/],
      ['a decompression bomb', () => fixtures.bomb, 'bomb.png', undefined],
    ])('refuses %s as an avatar (400 on file) and keeps the old one', async (_label, content, filename, message) => {
      const owner = await createUser(ctx)
      const url = (await uploadAvatar(fileForm(fixtures.png, { filename: 'keep.png' }), owner.accessToken)).json().data.avatar as string
      await expectRefusedWithoutTrace(() => uploadAvatar(fileForm(content(), { filename }), owner.accessToken), 'file', message)
      expect((await me(owner.accessToken)).avatar).toBe(url)
      expect((await download(url)).statusCode).toBe(200)
      await ctx.app.container.worker.drain()
      expect(await storedKeys()).toContain(pathOfUrl(url))
    })

    it('refuses an avatar upload without a token (401)', async () => {
      const response = await uploadAvatar(fileForm(fixtures.png, { filename: 'a.png' }))
      expect(response.statusCode).toBe(401)
      expect(response.json<ErrorJson>().error.code).toBe('UNAUTHENTICATED')
    })

    it('binds an unattached upload with PATCH /users/me { avatar } and moves its bytes to the avatar path', async () => {
      const owner = await createUser(ctx)
      const data = await stored(owner, fixtures.png, { filename: 'later.png' })
      const tmpPath = (await rowById(data.id))!.path
      const fileName = tmpPath.split('/').pop()!

      const response = await patchMe(owner.accessToken, { avatar: data.id })
      expect(response.statusCode).toBe(200)
      const avatar = response.json().data.avatar as string
      const path = `user/${owner.user.id}/avatar/${fileName}`
      expect(avatar).toBe(`${ctx.config.publicUrl}/api/v1/uploads/${path}`)
      expect(await rowById(data.id)).toMatchObject({ objectType: 'user', objectId: owner.user.id, tag: 'avatar', path, order: 0 })
      expect(path).toMatch(new RegExp(`^user/${owner.user.id}/avatar/${UUID}\\.png$`))

      // Served at its new address even before the worker has moved the bytes.
      const early = await download(avatar)
      expect(early.statusCode).toBe(200)
      expect(early.headers['cache-control']).toBe('public, max-age=31536000, immutable')

      await ctx.app.container.worker.drain()
      const keys = await storedKeys()
      expect(keys).toContain(path)
      expect(keys).not.toContain(tmpPath)
      expect(keys.filter((key) => key.startsWith(`tmp/${owner.user.id}/`))).toEqual([])
      expect((await rowById(data.id))!.storageKey).toBe(path)
      expect(await unfinishedStorageJobs(data.id)).toEqual([])

      const served = await download(avatar)
      expect(served.statusCode).toBe(200)
      expect(served.rawPayload).toEqual(early.rawPayload)
      expect((await me(owner.accessToken)).avatar).toBe(avatar)
      // The old, temporary address no longer names a file.
      expectNotFound(await download(`${API}/uploads/${tmpPath}`, { token: owner.accessToken }))

      // Sending the same id again changes nothing.
      const again = await patchMe(owner.accessToken, { avatar: data.id })
      expect(again.statusCode).toBe(200)
      expect(again.json().data.avatar).toBe(avatar)
      expect(await ctx.app.container.worker.drain()).toBe(0)
      expect(await rowById(data.id)).toMatchObject({ path, storageKey: path })
    })

    it('binds with PUT as well, and replaces an avatar set before (old row and bytes removed)', async () => {
      const owner = await createUser(ctx)
      const oldUrl = (await uploadAvatar(fileForm(fixtures.png, { filename: 'old.png' }), owner.accessToken)).json().data.avatar as string
      const data = await stored(owner, fixtures.otherPng, { filename: 'new.png', tag: 'avatar' })
      const response = await patchMe(owner.accessToken, { avatar: data.id }, 'PUT')
      expect(response.statusCode).toBe(200)
      const newUrl = response.json().data.avatar as string
      expect(newUrl).not.toBe(oldUrl)
      const avatars = await ctx.database.db.select().from(uploads).where(eq(uploads.objectId, owner.user.id))
      expect(avatars.map((row) => row.id)).toEqual([data.id])
      await ctx.app.container.worker.drain()
      expect(await storedKeys()).not.toContain(pathOfUrl(oldUrl))
      expectNotFound(await download(oldUrl))
      expect((await download(newUrl)).statusCode).toBe(200)
    })

    it.each([
      ['replaced by POST /users/me/avatar', 'post'],
      ['replaced by binding another upload', 'bind'],
      ['removed with { avatar: null }', 'remove'],
    ] as const)('leaves no bytes behind when a freshly bound avatar is %s before its bytes have moved', async (_label, how) => {
      const owner = await createUser(ctx)
      const first = await stored(owner, await png({ seed: 61 }), { filename: 'first.png' })
      const tmpPath = (await rowById(first.id))!.path
      expect((await patchMe(owner.accessToken, { avatar: first.id })).statusCode).toBe(200)
      const boundPath = (await rowById(first.id))!.path

      if (how === 'post') expect((await uploadAvatar(fileForm(await png({ seed: 62 }), { filename: 'second.png' }), owner.accessToken)).statusCode).toBe(200)
      if (how === 'bind') {
        const second = await stored(owner, await png({ seed: 63 }), { filename: 'second.png' })
        expect((await patchMe(owner.accessToken, { avatar: second.id })).statusCode).toBe(200)
      }
      if (how === 'remove') expect((await patchMe(owner.accessToken, { avatar: null })).statusCode).toBe(200)
      expect(await rowById(first.id)).toBeUndefined()

      await ctx.app.container.worker.drain()
      const keys = await storedKeys()
      expect(keys).not.toContain(tmpPath)
      expect(keys).not.toContain(boundPath)
      // A move whose file was deleted meanwhile has nothing left to do: it is no failing job.
      expect(await unfinishedStorageJobs(first.id)).toEqual([])
      const current = (await me(owner.accessToken)).avatar as string | null
      if (how === 'remove') expect(current).toBeNull()
      else {
        expect(keys).toContain(pathOfUrl(current!))
        expect((await download(current!)).statusCode).toBe(200)
      }
    })

    it("refuses to bind someone else's upload (400 on avatar) and changes nothing", async () => {
      const owner = await createUser(ctx)
      const other = await createUser(ctx)
      const mine = (await uploadAvatar(fileForm(fixtures.png, { filename: 'mine.png' }), owner.accessToken)).json().data.avatar as string
      const theirs = await stored(other, fixtures.otherPng, { filename: 'theirs.png' })
      const theirRow = await rowById(theirs.id)

      const response = await patchMe(owner.accessToken, { avatar: theirs.id, title: 'Thief' })
      expectFieldError(response, 'avatar')
      expect(await rowById(theirs.id)).toEqual(theirRow)
      const profile = await me(owner.accessToken)
      expect(profile.avatar).toBe(mine)
      expect(profile.title).toBeNull()
      await ctx.app.container.worker.drain()
      expect(await storedKeys()).toContain(theirRow!.path)
      expect(await storedKeys()).toContain(pathOfUrl(mine))
    })

    it('refuses to bind an upload id that does not exist (400 on avatar)', async () => {
      const owner = await createUser(ctx)
      expectFieldError(await patchMe(owner.accessToken, { avatar: '0190a0b0-0000-7000-8000-0000000000ff' }), 'avatar')
    })

    it.each([
      ['a PDF', () => fixtures.pdf, /JPEG, PNG/],
      ['a 6 MB PNG', () => fixtures.sixMbPng, /5 MB/],
      ['a text file', text, /JPEG, PNG/],
    ])('refuses to bind %s as the avatar (400 on avatar); the upload stays unattached', async (_label, content, message) => {
      const owner = await createUser(ctx)
      const data = await stored(owner, content(), { filename: 'candidate' })
      const before = await rowById(data.id)
      expectFieldError(await patchMe(owner.accessToken, { avatar: data.id }), 'avatar', message)
      expect(await rowById(data.id)).toEqual(before)
      expect((await me(owner.accessToken)).avatar).toBeNull()
    })

    it('removes the avatar with { avatar: null }: row, bytes (once the worker runs) and URL', async () => {
      const owner = await createUser(ctx)
      const url = (await uploadAvatar(fileForm(fixtures.png, { filename: 'bye.png' }), owner.accessToken)).json().data.avatar as string
      const response = await patchMe(owner.accessToken, { avatar: null })
      expect(response.statusCode).toBe(200)
      expect(response.json().data.avatar).toBeNull()
      expect(await ctx.database.db.select().from(uploads).where(eq(uploads.objectId, owner.user.id))).toEqual([])
      expect((await me(owner.accessToken)).avatar).toBeNull()
      expectNotFound(await download(url))
      await ctx.app.container.worker.drain()
      expect(await storedKeys()).not.toContain(pathOfUrl(url))
    })

    it('refuses an avatar that is not an upload id (400 on avatar)', async () => {
      const owner = await createUser(ctx)
      for (const avatar of ['not-a-uuid', 42, '']) expectFieldError(await patchMe(owner.accessToken, { avatar }), 'avatar')
    })

    it('shows the public avatar URL in GET /users/me and in the staff list GET /users', async () => {
      const owner = await createUser(ctx)
      const staff = await createUser(ctx, { permissions: ['view_users'] })
      const url = (await uploadAvatar(fileForm(fixtures.png, { filename: 'listed.png' }), owner.accessToken)).json().data.avatar as string
      expect((await me(owner.accessToken)).avatar).toBe(url)
      const list = await request(ctx.app, { method: 'GET', url: `/users?search=${encodeURIComponent(owner.user.email)}`, token: staff.accessToken })
      expect(list.statusCode).toBe(200)
      const item = (list.json().data.items as { id: string; avatar: string | null }[]).find((candidate) => candidate.id === owner.user.id)
      expect(item?.avatar).toBe(url)
      expect((await download(url)).statusCode).toBe(200)
    })
  })

  describe('housekeeping', () => {
    it('deletes unattached uploads older than 24 h with their bytes, and keeps younger and bound ones', async () => {
      const owner = await createUser(ctx)
      const old = await stored(owner, await png({ seed: 51 }), { filename: 'forgotten.png' })
      const oldRow = (await rowById(old.id))!
      const bound = await stored(owner, await png({ seed: 52 }), { filename: 'bound.png' })
      expect((await patchMe(owner.accessToken, { avatar: bound.id })).statusCode).toBe(200)
      await ctx.app.container.worker.drain()
      const boundRow = (await rowById(bound.id))!
      const other = await createUser(ctx)
      const attachedUrl = (await uploadAvatar(fileForm(fixtures.png, { filename: 'direct.png' }), other.accessToken)).json().data.avatar as string

      ctx.clock.advance(25 * HOUR)
      const later = await createUser(ctx)
      const young = await stored(later, await png({ seed: 53 }), { filename: 'fresh.png' })
      const youngRow = (await rowById(young.id))!

      expect(await ctx.app.container.worker.runPeriodic()).toContain('purge-unattached-uploads')
      expect(await rowById(old.id)).toBeUndefined()
      // Bytes go in a job after the purge committed.
      expect(await storedKeys()).toContain(oldRow.path)
      await ctx.app.container.worker.drain()

      const keys = await storedKeys()
      expect(keys).not.toContain(oldRow.path)
      expect(await rowById(young.id)).toEqual(youngRow)
      expect(keys).toContain(youngRow.path)
      expect(await rowById(bound.id)).toEqual(boundRow)
      expect(keys).toContain(boundRow.path)
      expect(keys).toContain(pathOfUrl(attachedUrl))
      expect((await download(attachedUrl)).statusCode).toBe(200)
      expect((await download(young.url)).statusCode).toBe(200)
    })
  })

  describe('when storage or the database fails mid-upload', () => {
    let broken: { app: FastifyInstance; storage: StorageDriver; dataDir: string; failPut: boolean; beforeRecord?: () => Promise<void> }
    beforeAll(async () => {
      const config = testConfig(s3?.env)
      const real = createStorage(config.storage)
      const state = { failPut: false, beforeRecord: undefined as (() => Promise<void>) | undefined }
      // The real driver, with a switch to make put fail and a hook that runs once the bytes are stored.
      const storage: StorageDriver = {
        ...real,
        async put(key, body, options) {
          if (state.failPut) {
            body.destroy()
            throw new Error('storage unavailable')
          }
          await real.put(key, body, options)
          await state.beforeRecord?.()
        },
      }
      const app = await buildApp({ config, database: ctx.database, clock: new ManualClock(), mailer: new MemoryMailer(), storage })
      await app.ready()
      broken = Object.assign(state, { app, storage: real, dataDir: config.dataDir })
    })
    afterAll(async () => {
      await broken.app.close()
      rmSync(broken.dataDir, { recursive: true, force: true })
    })

    const brokenKeys = async (): Promise<string[]> =>
      s3 ? s3.listKeys() : listFiles(join(broken.dataDir, 'uploads'))
    const send = (token: string) => {
      const form = fileForm(fixtures.png, { filename: 'a.png' })
      return broken.app.inject({ method: 'POST', url: `${API}/uploads`, payload: form.payload, headers: { ...form.headers, authorization: `Bearer ${token}` } })
    }

    it('answers 500 INTERNAL_ERROR when storage refuses the bytes, with no row and no staged file left', async () => {
      const owner = await createUser(ctx)
      const rowsBefore = await rows()
      const keysBefore = await brokenKeys()
      broken.failPut = true
      const response = await send(owner.accessToken).finally(() => {
        broken.failPut = false
      })
      expect(response.statusCode).toBe(500)
      expect(response.json<ErrorJson>().error.code).toBe('INTERNAL_ERROR')
      expect(response.body).not.toContain('storage unavailable')
      expect(await rows()).toEqual(rowsBefore)
      expect(await brokenKeys()).toEqual(keysBefore)
      expect(listFiles(join(broken.dataDir, 'tmp'))).toEqual([])
    })

    it('removes the stored bytes again when the row cannot be recorded (the owner vanished meanwhile)', async () => {
      const owner = await createUser(ctx)
      const rowsBefore = await rows()
      const keysBefore = await brokenKeys()
      broken.beforeRecord = async () => {
        await ctx.database.db.delete(users).where(eq(users.id, owner.user.id))
      }
      const response = await send(owner.accessToken).finally(() => {
        broken.beforeRecord = undefined
      })
      expect(response.statusCode).toBe(500)
      expect(await rows()).toEqual(rowsBefore)
      expect(await brokenKeys()).toEqual(keysBefore)
      expect(listFiles(join(broken.dataDir, 'tmp'))).toEqual([])
    })
  })

  describe('upload rate limit', () => {
    let limited: TestContext
    beforeAll(async () => {
      limited = await createTestApp({ env: { ...s3?.env, RATE_LIMIT_UPLOADS: '2', RATE_LIMIT_WINDOW_SECONDS: '60' } })
      tolerateTeardownDisconnects(limited.database)
    })
    afterAll(() => limited.close())

    const send = (url: string, token: string, content: Buffer) => {
      const form = fileForm(content, { filename: 'a.png' })
      return request(limited.app, { method: 'POST', url, token, payload: form.payload, headers: form.headers })
    }

    it('refuses the third upload of one user within the window (429 RATE_LIMITED), storing nothing', async () => {
      const heavy = await createUser(limited)
      const light = await createUser(limited)
      expect((await send('/uploads', heavy.accessToken, fixtures.png)).statusCode).toBe(201)
      const second = await send('/uploads', heavy.accessToken, fixtures.png)
      expect(second.statusCode).toBe(201)
      expect(second.headers['x-ratelimit-limit']).toBe('2')
      expect(second.headers['x-ratelimit-remaining']).toBe('0')

      const rowsBefore = await limited.database.db.select().from(uploads)
      const third = await send('/uploads', heavy.accessToken, fixtures.png)
      expect(third.statusCode).toBe(429)
      expect(third.json<ErrorJson>().error.code).toBe('RATE_LIMITED')
      expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      expect(await limited.database.db.select().from(uploads)).toEqual(rowsBefore)

      // Another user has a bucket of their own.
      expect((await send('/uploads', light.accessToken, fixtures.png)).statusCode).toBe(201)
      // Other routes are not in the uploads bucket.
      expect((await request(limited.app, { method: 'GET', url: '/users/me', token: heavy.accessToken })).statusCode).toBe(200)
    })

    it('counts POST /users/me/avatar in the same bucket as POST /uploads', async () => {
      const user = await createUser(limited)
      expect((await send('/users/me/avatar', user.accessToken, fixtures.png)).statusCode).toBe(200)
      expect((await send('/uploads', user.accessToken, fixtures.png)).statusCode).toBe(201)
      const avatar = await send('/users/me/avatar', user.accessToken, fixtures.otherPng)
      expect(avatar.statusCode).toBe(429)
      expect(avatar.json<ErrorJson>().error.code).toBe('RATE_LIMITED')
      const upload = await send('/uploads', user.accessToken, fixtures.png)
      expect(upload.statusCode).toBe(429)
    })
  })
})

describe('signed links to private files have their own secret', () => {
  const ROTATED = { JWT_ACCESS_SECRET: 'rotated-access-secret-0123456789-abcdefgh', JWT_REFRESH_SECRET: 'rotated-refresh-secret-0123456789-abcdefgh' }
  const OTHER_FILE_SECRET = 'another-file-signing-secret-0123456789-abcdef'

  it('keeps a link working when the JWT secrets change, and ends it when the file secret changes without its previous value', async () => {
    const first = await createTestApp()
    // Other instances on the same database and disk, as after a redeploy with other settings.
    const instance = (env: Record<string, string>) => createTestApp({ database: first.database, clock: first.clock, env: { DATA_DIR: first.config.dataDir, ...env } })
    const rotatedJwt = await instance(ROTATED)
    const rotatedFiles = await instance({ FILE_SIGNING_SECRET: OTHER_FILE_SECRET })
    const rotatingFiles = await instance({ FILE_SIGNING_SECRET: OTHER_FILE_SECRET, FILE_SIGNING_SECRET_PREVIOUS: first.config.fileSigning.secret })
    try {
      const owner = await createUser(first)
      const form = fileForm(await png({ seed: 77 }), { filename: 'contract.png', tag: 'order_delivery' })
      const response = await request(first.app, { method: 'POST', url: '/uploads', token: owner.accessToken, payload: form.payload, headers: form.headers })
      expect(response.statusCode, response.body).toBe(201)
      const link = localPart(response.json().data.url as string)
      expect(link).toContain('signature=')

      expect((await first.app.inject({ method: 'GET', url: link })).statusCode).toBe(200)
      expect((await rotatedJwt.app.inject({ method: 'GET', url: link })).statusCode).toBe(200)
      expect((await rotatedFiles.app.inject({ method: 'GET', url: link })).statusCode).toBe(404)
      expect((await rotatingFiles.app.inject({ method: 'GET', url: link })).statusCode).toBe(200)
    } finally {
      for (const other of [rotatedJwt, rotatedFiles, rotatingFiles]) await other.app.close()
      await first.close()
    }
    // Four instances are built: on a busy machine that alone can take most of the default timeout.
  }, 120_000)
})
