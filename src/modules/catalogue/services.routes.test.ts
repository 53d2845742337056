import { and, eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createUser, unique } from '../../../test/factories/users.ts'
import { multipart, png } from '../../../test/factories/files.ts'
import { newId } from '../../lib/ids.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { uploads } from '../uploads/uploads.table.ts'
import { categories } from './categories.table.ts'
import { serviceExtras, servicePackages, services } from './services.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

interface ServiceJson {
  id: string
  status: string
  rejectionReason: string | null
  startingPrice: number
  packages: { id: string; price: number; revisions: number | 'unlimited' }[]
  extras: { id: string; price: number }[]
  banner: string | null
  images: { id: string; url: string; order: number }[]
  [key: string]: unknown
}

describe('services routes', () => {
  let ctx: TestContext
  let seller: { token: string; id: string }
  let stranger: string
  let viewer: string
  let moderator: string
  let categoryId: string

  beforeAll(async () => {
    ctx = await createTestApp()
    const sellerUser = await createUser(ctx)
    seller = { token: sellerUser.accessToken, id: sellerUser.user.id }
    stranger = (await createUser(ctx)).accessToken
    viewer = (await createUser(ctx, { permissions: ['view_services'] })).accessToken
    moderator = (await createUser(ctx, { permissions: ['view_services', 'approve_services'] })).accessToken
    const now = ctx.clock.now()
    categoryId = newId()
    await ctx.database.db.insert(categories).values({ id: categoryId, name: 'Logo Design', slug: unique('logo-'), createdAt: now, updatedAt: now })
  })
  afterAll(() => ctx.close())

  const body = (overrides: Record<string, unknown> = {}) => ({
    title: 'I will design a modern logo',
    shortDescription: 'Clean, memorable logos',
    description: 'A professional logo for your brand, with source files and unlimited love.',
    categoryId,
    tags: ['logo', 'branding'],
    packages: [
      { name: 'Basic', description: 'One concept', price: 25.5, deliveryDays: 3, revisions: 2, features: ['1 concept'] },
      { name: 'Premium', price: 19.99, deliveryDays: 7, revisions: 'unlimited' },
    ],
    extras: [{ title: 'Source files', price: 10, additionalDays: 1 }],
    ...overrides,
  })

  const create = async (token = seller.token, overrides: Record<string, unknown> = {}): Promise<ServiceJson> => {
    const response = await request(ctx.app, { method: 'POST', url: '/services', token, payload: body(overrides) })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().data
  }

  const approve = async (id: string) => {
    const response = await request(ctx.app, { method: 'POST', url: `/admin/services/${id}/approve`, token: moderator })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data as ServiceJson
  }

  const row = async (id: string) => (await ctx.database.db.select().from(services).where(eq(services.id, id)))[0]!

  describe('POST /services', () => {
    it('creates a pending service with packages, extras and the cheapest package as starting price (201)', async () => {
      const service = await create()
      expect(service).toMatchObject({
        title: 'I will design a modern logo',
        status: 'pending',
        rejectionReason: null,
        startingPrice: 19.99,
        tags: ['logo', 'branding'],
        category: { id: categoryId, name: 'Logo Design' },
        seller: { id: seller.id, avatar: null },
        banner: null,
        images: [],
        rating: { average: 0, count: 0 },
        ordersCount: 0,
      })
      expect(service.packages.map((item) => [item.price, item.revisions])).toEqual([
        [25.5, 2],
        [19.99, 'unlimited'],
      ])
      expect(service.extras).toMatchObject([{ title: 'Source files', price: 10, additionalDays: 1 }])
      const stored = await row(service.id)
      expect(stored).toMatchObject({ sellerId: seller.id, status: 'pending', startingPriceCents: 1999, deletedAt: null })
      const packages = await ctx.database.db.select().from(servicePackages).where(eq(servicePackages.serviceId, service.id))
      expect(packages.map((item) => [item.position, item.priceCents, item.revisions]).sort()).toEqual([
        [0, 2550, 2],
        [1, 1999, null],
      ])
      expect(await ctx.database.db.select().from(serviceExtras).where(eq(serviceExtras.serviceId, service.id))).toHaveLength(1)
    })

    it('refuses an anonymous caller (401 UNAUTHENTICATED)', async () => {
      expectError(await request(ctx.app, { method: 'POST', url: '/services', payload: body() }), 401, 'UNAUTHENTICATED')
    })

    const invalid: [string, Record<string, unknown>, string[]][] = [
      ['missing packages', { packages: undefined }, ['packages']],
      ['empty packages', { packages: [] }, ['packages']],
      ['four packages', { packages: Array.from({ length: 4 }, () => ({ name: 'P', price: 10, deliveryDays: 1, revisions: 0 })) }, ['packages']],
      ['a negative price', { packages: [{ name: 'P', price: -5, deliveryDays: 1, revisions: 0 }] }, ['packages.0.price']],
      ['a non-numeric price', { packages: [{ name: 'P', price: 10, deliveryDays: 1, revisions: 0 }, { name: 'Q', price: '12.00', deliveryDays: 1, revisions: 0 }] }, ['packages.1.price']],
      ['a price with three decimals', { packages: [{ name: 'P', price: 10, deliveryDays: 1, revisions: 0 }, { name: 'Q', price: 10.005, deliveryDays: 1, revisions: 0 }] }, ['packages.1.price']],
      ['a price above 50000', { packages: [{ name: 'P', price: 50000.01, deliveryDays: 1, revisions: 0 }] }, ['packages.0.price']],
      ['an extra with three decimals', { extras: [{ title: 'Fast', price: 5.555 }] }, ['extras.0.price']],
      ['21 revisions', { packages: [{ name: 'P', price: 10, deliveryDays: 1, revisions: 21 }] }, ['packages.0.revisions']],
      ['91 delivery days', { packages: [{ name: 'P', price: 10, deliveryDays: 91, revisions: 1 }] }, ['packages.0.deliveryDays']],
      ['an unknown category', { categoryId: UNKNOWN_ID }, ['categoryId']],
      ['a malformed category id', { categoryId: 'logo-design' }, ['categoryId']],
      ['an HTML title', { title: 'Nice <script>alert(1)</script> logo' }, ['title']],
      ['a 100 KB title', { title: 'x'.repeat(100 * 1024) }, ['title']],
      ['a short description', { description: 'too short' }, ['description']],
      ['an uppercase tag', { tags: ['Logo'] }, ['tags.0']],
      ['a repeated tag', { tags: ['logo', 'logo'] }, ['tags']],
      ['an unknown field', { status: 'active' }, ['status']],
      ['a rating', { ratingAverage: 5 }, ['ratingAverage']],
      ['a seller id', { sellerId: UNKNOWN_ID }, ['sellerId']],
      ['an upload id that is not the caller’s', { bannerId: UNKNOWN_ID }, ['bannerId']],
    ]
    it.each(invalid)('refuses %s (400 VALIDATION_ERROR naming the field)', async (_label, overrides, fields) => {
      const payload = Object.fromEntries(Object.entries(body(overrides)).filter(([, value]) => value !== undefined))
      const before = (await ctx.database.db.select().from(services).where(eq(services.sellerId, seller.id))).length
      expectError(await request(ctx.app, { method: 'POST', url: '/services', token: seller.token, payload }), 400, 'VALIDATION_ERROR', fields)
      expect(await ctx.database.db.select().from(services).where(eq(services.sellerId, seller.id))).toHaveLength(before)
    })

    it('accepts prices that binary floating point cannot hold exactly, and keeps 0.01 precision', async () => {
      const service = await create(seller.token, { packages: [{ name: 'P', price: 1234.57, deliveryDays: 1, revisions: 0 }], extras: [{ title: 'Tip', price: 5.1 }] })
      expect(service.startingPrice).toBe(1234.57)
      expect((await row(service.id)).startingPriceCents).toBe(123_457)
    })

    it('binds uploaded images as banner and gallery, in order', async () => {
      const ids: string[] = []
      for (const seed of [1, 2, 3]) {
        const form = multipart([{ name: 'file', filename: `i${seed}.png`, content: await png({ seed }), contentType: 'image/png' }])
        const response = await request(ctx.app, { method: 'POST', url: '/uploads', token: seller.token, ...form })
        expect(response.statusCode, response.body).toBe(201)
        ids.push(response.json().data.id)
      }
      const service = await create(seller.token, { bannerId: ids[0], imageIds: [ids[2], ids[1]] })
      expect(service.banner).toMatch(/\/uploads\/service\//)
      expect(service.images.map((image) => [image.id, image.order])).toEqual([
        [ids[2], 0],
        [ids[1], 1],
      ])
      const bound = await ctx.database.db.select().from(uploads).where(eq(uploads.objectId, service.id))
      expect(bound.map((upload) => upload.tag).sort()).toEqual(['service_banner', 'service_gallery', 'service_gallery'])
    })
  })

  describe('GET /services/:serviceId (visibility)', () => {
    it('shows a pending service to its owner and to staff with view_services, and 404 to everyone else', async () => {
      const service = await create()
      for (const token of [seller.token, viewer]) expect((await request(ctx.app, { method: 'GET', url: `/services/${service.id}`, token })).statusCode).toBe(200)
      expectError(await request(ctx.app, { method: 'GET', url: `/services/${service.id}`, token: stranger }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: `/services/${service.id}` }), 404, 'NOT_FOUND')
    })

    it('shows an active service to anyone', async () => {
      const service = await create()
      await approve(service.id)
      const response = await request(ctx.app, { method: 'GET', url: `/services/${service.id}` })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ id: service.id, status: 'active' })
    })

    it('hides a rejected service from strangers and shows its reason only to the owner and staff', async () => {
      const service = await create()
      const rejected = await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/reject`, token: moderator, payload: { reason: 'Blurry images' } })
      expect(rejected.statusCode).toBe(200)
      expect(rejected.json().data).toMatchObject({ status: 'rejected', rejectionReason: 'Blurry images' })
      expectError(await request(ctx.app, { method: 'GET', url: `/services/${service.id}`, token: stranger }), 404, 'NOT_FOUND')
      for (const token of [seller.token, viewer]) {
        expect((await request(ctx.app, { method: 'GET', url: `/services/${service.id}`, token })).json().data.rejectionReason).toBe('Blurry images')
      }
    })

    it('answers 404 for unknown and malformed ids', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: `/services/${UNKNOWN_ID}` }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: '/services/not-an-id' }), 404, 'NOT_FOUND')
    })
  })

  describe('PUT /services/:serviceId', () => {
    it('replaces the offer, recomputes the starting price and resubmits a rejected service with its reason cleared', async () => {
      const service = await create()
      await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/reject`, token: moderator, payload: { reason: 'Too vague' } })
      const response = await request(ctx.app, {
        method: 'PUT',
        url: `/services/${service.id}`,
        token: seller.token,
        payload: body({ title: 'I will design a minimalist logo', packages: [{ name: 'Only', price: 99, deliveryDays: 2, revisions: 1 }], extras: [] }),
      })
      expect(response.statusCode, response.body).toBe(200)
      const updated: ServiceJson = response.json().data
      expect(updated).toMatchObject({ title: 'I will design a minimalist logo', status: 'pending', rejectionReason: null, startingPrice: 99, extras: [] })
      expect(updated.packages).toHaveLength(1)
      expect(await row(service.id)).toMatchObject({ status: 'pending', rejectionReason: null, startingPriceCents: 9900 })
      expect(await ctx.database.db.select().from(servicePackages).where(eq(servicePackages.serviceId, service.id))).toHaveLength(1)
    })

    it('resubmits an active service for review when edited', async () => {
      const service = await create()
      await approve(service.id)
      const response = await request(ctx.app, { method: 'PUT', url: `/services/${service.id}`, token: seller.token, payload: body() })
      expect(response.json().data.status).toBe('pending')
    })

    it("answers 404 for another user's service and changes nothing", async () => {
      const service = await create()
      const before = await row(service.id)
      expectError(await request(ctx.app, { method: 'PUT', url: `/services/${service.id}`, token: stranger, payload: body({ title: 'Hijacked title' }) }), 404, 'NOT_FOUND')
      expect(await row(service.id)).toEqual(before)
    })

    it('validates the body as on create (400 on packages.0.price)', async () => {
      const service = await create()
      expectError(
        await request(ctx.app, { method: 'PUT', url: `/services/${service.id}`, token: seller.token, payload: body({ packages: [{ name: 'P', price: 'cheap', deliveryDays: 1, revisions: 0 }] }) }),
        400,
        'VALIDATION_ERROR',
        ['packages.0.price'],
      )
    })
  })

  describe('DELETE /services/:serviceId', () => {
    it('soft-deletes the service, which is then 404 to everyone, its owner included', async () => {
      const service = await create()
      await approve(service.id)
      const response = await request(ctx.app, { method: 'DELETE', url: `/services/${service.id}`, token: seller.token })
      expect(response.statusCode).toBe(200)
      expect((await row(service.id)).deletedAt).toBeInstanceOf(Date)
      for (const token of [seller.token, viewer, undefined]) expectError(await request(ctx.app, { method: 'GET', url: `/services/${service.id}`, token }), 404, 'NOT_FOUND')
    })

    it("answers 404 for another user's service and leaves it in place", async () => {
      const service = await create()
      expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${service.id}`, token: stranger }), 404, 'NOT_FOUND')
      expect((await row(service.id)).deletedAt).toBeNull()
    })

    it('refuses an anonymous caller (401)', async () => {
      expectError(await request(ctx.app, { method: 'DELETE', url: `/services/${UNKNOWN_ID}` }), 401, 'UNAUTHENTICATED')
    })
  })

  describe('pause and resume', () => {
    it('pauses an active service and resumes it', async () => {
      const service = await create()
      await approve(service.id)
      const paused = await request(ctx.app, { method: 'POST', url: `/services/${service.id}/pause`, token: seller.token })
      expect(paused.json().data.status).toBe('paused')
      expectError(await request(ctx.app, { method: 'GET', url: `/services/${service.id}` }), 404, 'NOT_FOUND')
      const resumed = await request(ctx.app, { method: 'POST', url: `/services/${service.id}/resume`, token: seller.token })
      expect(resumed.json().data.status).toBe('active')
      expect((await row(service.id)).status).toBe('active')
    })

    it('refuses to pause a pending service or resume an active one (422 INVALID_TRANSITION)', async () => {
      const service = await create()
      const pause = await request(ctx.app, { method: 'POST', url: `/services/${service.id}/pause`, token: seller.token })
      expectError(pause, 422, 'INVALID_TRANSITION')
      expect(pause.json().error.message).toBe('A pending service cannot be paused')
      await approve(service.id)
      expectError(await request(ctx.app, { method: 'POST', url: `/services/${service.id}/resume`, token: seller.token }), 422, 'INVALID_TRANSITION')
    })

    it("answers 404 when pausing another user's service", async () => {
      const service = await create()
      await approve(service.id)
      expectError(await request(ctx.app, { method: 'POST', url: `/services/${service.id}/pause`, token: stranger }), 404, 'NOT_FOUND')
      expect((await row(service.id)).status).toBe('active')
    })
  })

  describe('moderation', () => {
    it('lists pending services for staff with view_services, oldest first, paginated', async () => {
      const service = await create()
      const response = await request(ctx.app, { method: 'GET', url: '/admin/services?limit=100', token: viewer })
      expect(response.statusCode).toBe(200)
      const data = response.json().data
      expect(data.items.every((item: ServiceJson) => item.status === 'pending')).toBe(true)
      expect(data.items.map((item: ServiceJson) => item.id)).toContain(service.id)
      expect(data.pagination).toMatchObject({ page: 1, limit: 100 })
    })

    it('filters by another status and refuses an unknown one (400 status)', async () => {
      const service = await create()
      await approve(service.id)
      const active = await request(ctx.app, { method: 'GET', url: '/admin/services?status=active&limit=100', token: viewer })
      expect(active.json().data.items.map((item: ServiceJson) => item.id)).toContain(service.id)
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/services?status=deleted', token: viewer }), 400, 'VALIDATION_ERROR', ['status'])
    })

    it('refuses the list without view_services (401, 403)', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/services' }), 401, 'UNAUTHENTICATED')
      expectError(await request(ctx.app, { method: 'GET', url: '/admin/services', token: stranger }), 403, 'FORBIDDEN')
    })

    it('approves a pending service and writes the service.approved event in the outbox', async () => {
      const service = await create()
      const approved = await approve(service.id)
      expect(approved.status).toBe('active')
      const events = await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))
      const event = events.find((job) => (job.payload as { data: { serviceId: string } }).data.serviceId === service.id)
      expect(event?.payload).toEqual({ event: 'service.approved', timestamp: expect.any(String), data: { serviceId: service.id, sellerId: seller.id } })
    })

    it('rejects a pending service and writes the service.rejected event in the same transaction', async () => {
      const service = await create()
      const rejected = await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/reject`, token: moderator, payload: { reason: 'Blurry images' } })
      expect(rejected.statusCode, rejected.body).toBe(200)
      const events = await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))
      const event = events.find((job) => (job.payload as { data: { serviceId: string } }).data.serviceId === service.id)
      expect(event?.payload).toEqual({ event: 'service.rejected', timestamp: expect.any(String), data: { serviceId: service.id, sellerId: seller.id, reason: 'Blurry images' } })
      const writer = async (table: string, id: string) => {
        const result: unknown = await ctx.database.db.execute(sql`select xmin::text as xmin from ${sql.identifier(table)} where id = ${id}`)
        return (result as { rows: { xmin: string }[] }).rows[0]!.xmin
      }
      expect(await writer('outbox_jobs', event!.id)).toBe(await writer('services', service.id))
    })

    it('refuses to approve or reject a service that is not pending (422 INVALID_TRANSITION)', async () => {
      const service = await create()
      await approve(service.id)
      const again = await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/approve`, token: moderator })
      expectError(again, 422, 'INVALID_TRANSITION')
      expect(again.json().error.message).toBe('An active service cannot be approved')
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/reject`, token: moderator, payload: { reason: 'x' } }), 422, 'INVALID_TRANSITION')
    })

    it('refuses approval and rejection without approve_services (403) and leaves the service pending', async () => {
      const service = await create()
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/approve`, token: viewer }), 403, 'FORBIDDEN')
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/reject`, token: seller.token, payload: { reason: 'x' } }), 403, 'FORBIDDEN')
      expect((await row(service.id)).status).toBe('pending')
      const events = await ctx.database.db.select().from(outboxJobs).where(and(eq(outboxJobs.topic, 'event')))
      expect(events.some((job) => (job.payload as { data: { serviceId: string } }).data.serviceId === service.id)).toBe(false)
    })

    it('answers a write, the review queue and GET /services/{id} with the same service, its rejection reason for the owner and staff', async () => {
      const created = await create()
      const read = async (token: string) => (await request(ctx.app, { method: 'GET', url: `/services/${created.id}`, token })).json().data as ServiceJson
      expect(await read(seller.token)).toEqual(created)
      const rejected = await request(ctx.app, { method: 'POST', url: `/admin/services/${created.id}/reject`, token: moderator, payload: { reason: 'Blurry images' } })
      expect(rejected.statusCode, rejected.body).toBe(200)
      const answer = rejected.json().data as ServiceJson
      expect(answer.rejectionReason).toBe('Blurry images')
      expect(await read(moderator)).toEqual(answer)
      expect(await read(seller.token)).toEqual(answer)
      const queue = await request(ctx.app, { method: 'GET', url: '/admin/services?status=rejected&limit=100', token: viewer })
      expect(queue.json().data.items.find((item: ServiceJson) => item.id === created.id)).toEqual(answer)
    })

    it('requires a reason to reject (400 reason) and answers 404 for an unknown service', async () => {
      const service = await create()
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/services/${service.id}/reject`, token: moderator, payload: { reason: '' } }), 400, 'VALIDATION_ERROR', ['reason'])
      expectError(await request(ctx.app, { method: 'POST', url: `/admin/services/${UNKNOWN_ID}/approve`, token: moderator }), 404, 'NOT_FOUND')
    })
  })

  describe('images', () => {
    const imageForm = async (field: string, count: number) =>
      multipart(await Promise.all(Array.from({ length: count }, async (_, index) => ({ name: field, filename: `g${index}.png`, content: await png({ seed: 40 + index }), contentType: 'image/png' }))))

    it('adds gallery images in order and appends later ones after them', async () => {
      const service = await create()
      const first = await request(ctx.app, { method: 'POST', url: `/services/${service.id}/images`, token: seller.token, ...(await imageForm('files', 2)) })
      expect(first.statusCode, first.body).toBe(200)
      const second = await request(ctx.app, { method: 'POST', url: `/services/${service.id}/images`, token: seller.token, ...(await imageForm('files', 1)) })
      const images: ServiceJson['images'] = second.json().data.images
      expect(images.map((image) => image.order)).toEqual([0, 1, 2])
      expect(images[0]!.url).toMatch(new RegExp(`/uploads/service/${service.id}/service_gallery/`))
    })

    it('sets and replaces the banner', async () => {
      const service = await create()
      const first = await request(ctx.app, { method: 'POST', url: `/services/${service.id}/banner`, token: seller.token, ...(await imageForm('file', 1)) })
      expect(first.statusCode, first.body).toBe(200)
      const second = await request(ctx.app, { method: 'POST', url: `/services/${service.id}/banner`, token: seller.token, ...(await imageForm('file', 1)) })
      expect(second.json().data.banner).not.toBe(first.json().data.banner)
      const banners = await ctx.database.db.select().from(uploads).where(and(eq(uploads.objectId, service.id), eq(uploads.tag, 'service_banner')))
      expect(banners).toHaveLength(1)
    })

    it("answers 404 for another user's service and stores nothing", async () => {
      const service = await create()
      expectError(await request(ctx.app, { method: 'POST', url: `/services/${service.id}/images`, token: stranger, ...(await imageForm('files', 1)) }), 404, 'NOT_FOUND')
      expect(await ctx.database.db.select().from(uploads).where(eq(uploads.objectId, service.id))).toEqual([])
    })

    it('refuses more than 10 images (400 files)', async () => {
      const service = await create()
      expectError(await request(ctx.app, { method: 'POST', url: `/services/${service.id}/images`, token: seller.token, ...(await imageForm('files', 11)) }), 400, 'VALIDATION_ERROR', ['files'])
    })
  })

  describe('servicesCount in GET /users', () => {
    it('counts the services of each user that are not deleted', async () => {
      const owner = await createUser(ctx)
      const kept = await create(owner.accessToken)
      const removed = await create(owner.accessToken)
      await create(owner.accessToken)
      await request(ctx.app, { method: 'DELETE', url: `/services/${removed.id}`, token: owner.accessToken })
      expect(kept.id).toBeDefined()
      const admin = (await createUser(ctx, { permissions: ['view_users'] })).accessToken
      const response = await request(ctx.app, { method: 'GET', url: `/users?search=${owner.user.username}`, token: admin })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data.items).toMatchObject([{ id: owner.user.id, servicesCount: 2 }])
    })
  })
})
