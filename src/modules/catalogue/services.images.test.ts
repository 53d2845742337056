import { and, asc, eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createCategory, publishService } from '../../../test/factories/services.ts'
import { createUser } from '../../../test/factories/users.ts'
import { multipart, png } from '../../../test/factories/files.ts'
import { createLocalStorage } from '../../platform/storage/local.ts'
import { uploads } from '../uploads/uploads.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

type Images = { id: string; url: string; order: number }[]

describe('removing and reordering gallery images', () => {
  let ctx: TestContext
  let seller: string
  let stranger: string
  let categoryId: string

  beforeAll(async () => {
    ctx = await createTestApp()
    seller = (await createUser(ctx)).accessToken
    stranger = (await createUser(ctx)).accessToken
    categoryId = await createCategory(ctx)
  })
  afterAll(() => ctx.close())

  /** A service of the seller's with three gallery images, ordered 0, 1, 2. */
  async function serviceWithThreeImages(): Promise<{ id: string; images: Images }> {
    const id = await publishService(ctx, seller, categoryId)
    const form = multipart(await Promise.all([0, 1, 2].map(async (index) => ({ name: 'files', filename: `g${index}.png`, content: await png({ seed: 60 + index }), contentType: 'image/png' }))))
    const added = await request(ctx.app, { method: 'POST', url: `/services/${id}/images`, token: seller, ...form })
    expect(added.statusCode, added.body).toBe(200)
    const images: Images = added.json().data.images
    expect(images.map((image) => image.order)).toEqual([0, 1, 2])
    return { id, images }
  }

  const galleryRows = (serviceId: string) =>
    ctx.database.db
      .select()
      .from(uploads)
      .where(and(eq(uploads.objectType, 'service'), eq(uploads.objectId, serviceId), eq(uploads.tag, 'service_gallery')))
      .orderBy(asc(uploads.order))

  const storedBytes = () => {
    if (ctx.config.storage.kind !== 'local') throw new Error('expected local storage')
    return createLocalStorage(ctx.config.storage.dir)
  }

  it('removes one image: its row at once, its bytes once the worker has run (200)', async () => {
    const service = await serviceWithThreeImages()
    const [first, removed, third] = service.images
    const [row] = await ctx.database.db.select().from(uploads).where(eq(uploads.id, removed!.id))
    expect(await storedBytes().exists(row!.storageKey)).toBe(true)

    const response = await request(ctx.app, { method: 'DELETE', url: `/services/${service.id}/images/${removed!.id}`, token: seller })
    expect(response.statusCode, response.body).toBe(200)
    expect((response.json().data.images as Images).map((image) => image.id)).toEqual([first!.id, third!.id])
    expect(await ctx.database.db.select().from(uploads).where(eq(uploads.id, removed!.id))).toEqual([])

    await ctx.app.container.worker.drain()
    expect(await storedBytes().exists(row!.storageKey)).toBe(false)
    expect((await galleryRows(service.id)).map((file) => file.id)).toEqual([first!.id, third!.id])
  })

  it('reorders the gallery, in the answer and in the database (200)', async () => {
    const service = await serviceWithThreeImages()
    const [a, b, c] = service.images.map((image) => image.id)
    const wanted = [c!, a!, b!]
    const response = await request(ctx.app, { method: 'PUT', url: `/services/${service.id}/images/order`, token: seller, payload: { imageIds: wanted } })
    expect(response.statusCode, response.body).toBe(200)
    expect((response.json().data.images as Images).map((image) => [image.id, image.order])).toEqual([
      [c, 0],
      [a, 1],
      [b, 2],
    ])
    expect((await galleryRows(service.id)).map((file) => [file.id, file.order])).toEqual([
      [c, 0],
      [a, 1],
      [b, 2],
    ])
  })

  it('refuses a list that is not exactly the current images (400 imageIds) and changes nothing', async () => {
    const service = await serviceWithThreeImages()
    const [a, b, c] = service.images.map((image) => image.id)
    for (const imageIds of [[a, b], [a, b, c, UNKNOWN_ID], [a, b, UNKNOWN_ID], [a, b, c, c], []]) {
      const response = await request(ctx.app, { method: 'PUT', url: `/services/${service.id}/images/order`, token: seller, payload: { imageIds } })
      expectError(response, 400, 'VALIDATION_ERROR', ['imageIds'])
    }
    expect((await galleryRows(service.id)).map((file) => [file.id, file.order])).toEqual([
      [a, 0],
      [b, 1],
      [c, 2],
    ])
  })

  it("answers 404 for another user's service and leaves the gallery alone", async () => {
    const service = await serviceWithThreeImages()
    const [a, b, c] = service.images.map((image) => image.id)
    expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${service.id}/images/${a}`, token: stranger }), 404, 'NOT_FOUND')
    expectError(await request(ctx.app, { method: 'PUT', url: `/services/${service.id}/images/order`, token: stranger, payload: { imageIds: [c, b, a] } }), 404, 'NOT_FOUND')
    expect((await galleryRows(service.id)).map((file) => [file.id, file.order])).toEqual([
      [a, 0],
      [b, 1],
      [c, 2],
    ])
  })

  it('answers 404 for an unknown image, an image of another service and an unknown service', async () => {
    const service = await serviceWithThreeImages()
    const other = await serviceWithThreeImages()
    expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${service.id}/images/${UNKNOWN_ID}`, token: seller }), 404, 'NOT_FOUND')
    expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${service.id}/images/${other.images[0]!.id}`, token: seller }), 404, 'NOT_FOUND')
    expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${UNKNOWN_ID}/images/${service.images[0]!.id}`, token: seller }), 404, 'NOT_FOUND')
    expect(await galleryRows(other.id)).toHaveLength(3)
    expect(await galleryRows(service.id)).toHaveLength(3)
  })

  it('requires a token (401)', async () => {
    const service = await serviceWithThreeImages()
    const ids = service.images.map((image) => image.id)
    expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${service.id}/images/${ids[0]}` }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'PUT', url: `/services/${service.id}/images/order`, payload: { imageIds: ids } }), 401, 'UNAUTHENTICATED')
  })
})
