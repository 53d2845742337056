import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import sharp from 'sharp'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HOUR } from '../../lib/clock.ts'
import { fileForm, MB } from '../../../test/factories/files.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { uploads } from './uploads.table.ts'

/** A 2x2 24-bit BMP: an image type that is never re-encoded, so never shown inline. */
function bmp(): Buffer {
  const pixels = Buffer.alloc(16, 0x7f)
  const header = Buffer.alloc(54)
  header.write('BM', 0, 'ascii')
  header.writeUInt32LE(54 + pixels.length, 2)
  header.writeUInt32LE(54, 10)
  header.writeUInt32LE(40, 14)
  header.writeInt32LE(2, 18)
  header.writeInt32LE(2, 22)
  header.writeUInt16LE(1, 26)
  header.writeUInt16LE(24, 28)
  header.writeUInt32LE(pixels.length, 34)
  return Buffer.concat([header, pixels])
}

const storedFiles = (dir: string): string[] => {
  try {
    return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => /\.[a-z]+$|[0-9a-f-]{36}$/.test(name))
  } catch {
    return []
  }
}

describe('uploads: serving policy and edge cases', () => {
  let ctx: TestContext
  let owner: TestUser
  const logs: string[] = []
  beforeAll(async () => {
    const logStream = new PassThrough()
    logStream.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
    ctx = await createTestApp({ env: { LOG_LEVEL: 'info' }, logStream })
    owner = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  const upload = async (content: Buffer, options: { tag?: string; filename?: string } = {}) => {
    const response = await request(ctx.app, { method: 'POST', url: '/uploads', token: owner.accessToken, ...fileForm(content, options) })
    return response
  }

  it('serves an image type that is not re-encoded (BMP) as an opaque download, never inline', async () => {
    const created = await upload(bmp(), { filename: 'picture.bmp', tag: 'chat_attachment' })
    expect(created.statusCode).toBe(201)
    expect(created.json().data.mimetype).toBe('image/bmp')
    const file = await ctx.app.inject({ method: 'GET', url: new URL(created.json().data.url).pathname + new URL(created.json().data.url).search })
    expect(file.statusCode).toBe(200)
    expect(file.headers['content-type']).toBe('application/octet-stream')
    expect(file.headers['content-disposition']).toMatch(/^attachment/)
  })

  it('refuses an avatar whose uploaded size is over 5 MB even if it would re-encode smaller (400 on file)', async () => {
    const uncompressed = await sharp({ create: { width: 1400, height: 1400, channels: 3, background: 'white' } })
      .png({ compressionLevel: 0 })
      .toBuffer()
    expect(uncompressed.length).toBeGreaterThan(5 * MB)
    const response = await upload(uncompressed, { filename: 'big.png', tag: 'avatar' })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toEqual([{ field: 'file', message: 'must be at most 5 MB' }])
  })

  it('does not write the signature of a signed link to the logs', async () => {
    const created = await upload(Buffer.from('private notes\n'), { filename: 'notes.txt' })
    const url = new URL(created.json().data.url)
    const signature = url.searchParams.get('signature')!
    expect((await ctx.app.inject({ method: 'GET', url: url.pathname + url.search })).statusCode).toBe(200)
    const written = logs.join('')
    expect(written).toContain('signature=[redacted]')
    expect(written).not.toContain(signature)
  })

  it('answers 404, not 500, when a file row outlives its bytes', async () => {
    const created = await upload(Buffer.from('soon gone\n'), { filename: 'gone.txt' })
    const [row] = await ctx.database.db.select().from(uploads).where(eq(uploads.id, created.json().data.id))
    await ctx.app.container.uploads.deleteStoredFile({ key: row!.storageKey })
    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/uploads/${row!.path}`, headers: { authorization: `Bearer ${owner.accessToken}` } })
    expect(response.statusCode).toBe(404)
    expect(response.json().error.code).toBe('NOT_FOUND')
  })

  it('sweeps bytes that were stored but never recorded (a crash between the two) after a grace hour', async () => {
    const dir = (ctx.config.storage as { dir: string }).dir
    const orphanKey = `tmp/${owner.user.id}/orphan-${Date.now()}.bin`
    const { storage } = { storage: (await import('../../platform/storage/local.ts')).createLocalStorage(dir) }
    await storage.put(orphanKey, Readable.from([Buffer.from('orphan')]), { contentType: 'application/octet-stream', size: 6 })
    await ctx.database.db.transaction((tx) =>
      ctx.app.container.outbox.enqueue(tx, { topic: 'storage.delete_if_orphan', payload: { key: orphanKey }, runAt: new Date(ctx.clock.now().getTime() + HOUR) }),
    )
    // A recorded upload also has such a job; it must survive it.
    const kept = await upload(Buffer.from('keep me\n'), { filename: 'keep.txt' })
    ctx.clock.advance(HOUR + 1000)
    await ctx.app.container.worker.drain()
    expect(await storage.exists(orphanKey)).toBe(false)
    const [row] = await ctx.database.db.select().from(uploads).where(eq(uploads.id, kept.json().data.id))
    expect(await storage.exists(row!.storageKey)).toBe(true)
    expect(storedFiles(join(dir, 'tmp', owner.user.id)).some((name) => name.includes('orphan'))).toBe(false)
  })

  it('answers 404 for a file path holding a NUL character', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/api/v1/uploads/tmp/a%00b.png' })
    expect(response.statusCode).toBe(404)
  })
})

describe('NUL characters and impossible dates are 400, never 500', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  it('refuses a NUL character in a JSON body field (400 on the field)', async () => {
    const response = await request(ctx.app, { method: 'POST', url: '/auth/login', payload: { email: 'a\u0000@b.co', password: 'x' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toEqual([{ field: 'email', message: 'must not contain NUL characters' }])
  })

  it('refuses a NUL character in a query string (400 on the parameter)', async () => {
    const staff = await createUser(ctx, { permissions: ['view_users'] })
    for (const url of ['/auth/check-email?email=a%00@b.co', '/users?search=%00']) {
      const response = await request(ctx.app, { method: 'GET', url, token: staff.accessToken })
      expect(response.statusCode).toBe(400)
      expect(response.json().error.code).toBe('VALIDATION_ERROR')
    }
  })

  it('refuses year 0000 in a portfolio date (400 on startDate)', async () => {
    const { accessToken } = await createUser(ctx)
    const response = await request(ctx.app, { method: 'POST', url: '/users/me/projects', token: accessToken, payload: { title: 'Old', startDate: '0000-01-01' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details.map((detail: { field: string }) => detail.field)).toEqual(['startDate'])
  })
})
