import { readdirSync } from 'node:fs'
import { and, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileForm, html, multipart, png } from '../../../test/factories/files.ts'
import { createCategory, publishService, serviceBody } from '../../../test/factories/services.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { uploads } from '../uploads/uploads.table.ts'
import { GALLERY_LIMIT } from './service-rules.ts'

/** Every stored file under the local storage directory (recursively). */
const storedFiles = (dir: string): string[] => {
  try {
    return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => /\.[a-z]+$/.test(name))
  } catch {
    return []
  }
}

describe('gallery limits and all-or-nothing uploads under concurrency', () => {
  let ctx: TestContext
  let seller: TestUser
  let categoryId: string

  beforeAll(async () => {
    ctx = await createTestApp()
    seller = await createUser(ctx)
    categoryId = await createCategory(ctx, 'Races')
  })
  afterAll(() => ctx.close())

  const galleryCount = async (serviceId: string) =>
    (await ctx.database.db.select().from(uploads).where(and(eq(uploads.objectId, serviceId), eq(uploads.tag, 'service_gallery')))).length

  const images = async (count: number, seed: number) =>
    multipart(await Promise.all(Array.from({ length: count }, async (_, index) => ({ name: 'files', filename: `i${index}.png`, content: await png({ seed: seed + index }), contentType: 'image/png' }))))

  async function serviceWithImages(count: number): Promise<string> {
    const id = await publishService(ctx, seller.accessToken, categoryId)
    if (count > 0) {
      const added = await request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: seller.accessToken, ...(await images(count, 10)) })
      expect(added.statusCode, added.body).toBe(200)
    }
    return id
  }

  it('lets exactly one of two concurrent additions fill the last places of a gallery (counted under the lock)', async () => {
    const id = await serviceWithImages(GALLERY_LIMIT - 2)
    const [first, second] = await Promise.all([
      request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: seller.accessToken, ...(await images(2, 40)) }),
      request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: seller.accessToken, ...(await images(2, 50)) }),
    ])
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 400])
    expectError([first, second].find((response) => response.statusCode === 400)!, 400, 'VALIDATION_ERROR', ['files'])
    expect(await galleryCount(id)).toBe(GALLERY_LIMIT)
  })

  it('lets exactly one of an edit binding images and an addition fill the last places of a gallery', async () => {
    const id = await serviceWithImages(GALLERY_LIMIT - 2)
    const uploadIds: string[] = []
    for (const seed of [70, 71]) {
      const uploaded = await request(ctx.app, { method: 'POST', url: '/uploads', token: seller.accessToken, ...fileForm(await png({ seed }), { filename: 'u.png', contentType: 'image/png' }) })
      expect(uploaded.statusCode, uploaded.body).toBe(201)
      uploadIds.push(uploaded.json().data.id as string)
    }
    const edit = request(ctx.app, {
      method: 'PUT',
      url: `/services/${id}`,
      token: seller.accessToken,
      payload: serviceBody(categoryId, { imageIds: uploadIds }),
    })
    const addition = request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: seller.accessToken, ...(await images(2, 80)) })
    const answers = await Promise.all([edit, addition])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 400])
    expect(await galleryCount(id)).toBe(GALLERY_LIMIT)
  })

  it('attaches no image at all when one file of several is refused, and keeps none of their bytes', async () => {
    const id = await serviceWithImages(1)
    const before = storedFiles(ctx.config.storage.kind === 'local' ? ctx.config.storage.dir : '')
    const form = multipart([
      { name: 'files', filename: 'ok-1.png', content: await png({ seed: 90 }), contentType: 'image/png' },
      { name: 'files', filename: 'ok-2.png', content: await png({ seed: 91 }), contentType: 'image/png' },
      { name: 'files', filename: 'page.png', content: html(), contentType: 'image/png' },
    ])
    const refused = await request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: seller.accessToken, ...form })
    expectError(refused, 400, 'VALIDATION_ERROR', ['files'])
    expect(await galleryCount(id)).toBe(1)
    expect(storedFiles(ctx.config.storage.kind === 'local' ? ctx.config.storage.dir : '')).toEqual(before)
  })

  it("answers 404 to a stranger adding images to another user's full gallery, and to the owner of a deleted service", async () => {
    const id = await serviceWithImages(GALLERY_LIMIT - 2)
    const stranger = await createUser(ctx)
    expectError(await request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: stranger.accessToken, ...(await images(3, 100)) }), 404, 'NOT_FOUND')
    expect((await request(ctx.app, { method: 'DELETE', url: `/services/${id}`, token: seller.accessToken })).statusCode).toBe(200)
    expectError(await request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: seller.accessToken, ...(await images(3, 110)) }), 404, 'NOT_FOUND')
  })
})
