import { randomUUID } from 'node:crypto'
import { eq } from 'drizzle-orm'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../../../test/factories/users.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { users } from './users.table.ts'

function avatarForm(png: Buffer) {
  const boundary = `----profile${randomUUID()}`
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="me.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

describe('GET /users/{userId}: the public profile', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  it('shows anyone the public fields, the avatar and the whole portfolio, and nothing private', async () => {
    const seller = await createUser(ctx, { fullName: 'Ada Seller' })
    const token = seller.accessToken
    await request(ctx.app, { method: 'PATCH', url: '/users/me', token, payload: { title: 'Logo designer', description: 'Ten years of logos', phone: '+1 555 0100' } })
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: 'blue' } }).png().toBuffer()
    expect((await request(ctx.app, { method: 'POST', url: '/users/me/avatar', token, ...avatarForm(png) })).statusCode).toBe(200)
    await request(ctx.app, { method: 'POST', url: '/users/me/skills', token, payload: { name: 'Illustrator', level: 'expert', yearsOfExperience: 10 } })
    await request(ctx.app, { method: 'POST', url: '/users/me/projects', token, payload: { title: 'Brand kit', startDate: '2024-01-01', endDate: null } })
    await request(ctx.app, {
      method: 'POST',
      url: '/users/me/experiences',
      token,
      payload: { company: 'Studio', position: 'Designer', startDate: '2020-05-01', endDate: null },
    })
    await request(ctx.app, {
      method: 'POST',
      url: '/users/me/education',
      token,
      payload: { institution: 'Art School', degree: 'BA', fieldOfStudy: 'Design', startDate: '2015-09-01', endDate: '2019-06-30' },
    })

    const response = await request(ctx.app, { method: 'GET', url: `/users/${seller.user.id}` })
    expect(response.statusCode).toBe(200)
    const profile = response.json().data
    expect(profile).toMatchObject({
      id: seller.user.id,
      fullName: 'Ada Seller',
      username: seller.user.username,
      title: 'Logo designer',
      description: 'Ten years of logos',
      isKYCVerified: false,
    })
    expect(Object.keys(profile).sort()).toEqual(['avatar', 'buyerRating', 'buyerReviewsCount', 'createdAt', 'description', 'fullName', 'id', 'isKYCVerified', 'portfolio', 'sellerLevel', 'stats', 'title', 'username'])
    expect(profile.avatar).toMatch(new RegExp(`/api/v1/uploads/user/${seller.user.id}/avatar/[0-9a-f-]+\\.png$`))
    expect(profile.portfolio.skills).toHaveLength(1)
    expect(profile.portfolio.skills[0]).toMatchObject({ name: 'Illustrator', level: 'expert' })
    expect(profile.portfolio.projects[0]).toMatchObject({ title: 'Brand kit', endDate: null })
    expect(profile.portfolio.experiences[0]).toMatchObject({ company: 'Studio', endDate: null })
    expect(profile.portfolio.education[0]).toMatchObject({ institution: 'Art School', endDate: '2019-06-30' })
    expect(response.body).not.toContain(seller.user.email)
    expect(response.body).not.toContain('555 0100')
  })

  it('answers an empty portfolio, no avatar, the level new and no ratings for a new user', async () => {
    const { user } = await createUser(ctx)
    const profile = (await request(ctx.app, { method: 'GET', url: `/users/${user.id}` })).json().data
    expect(profile.avatar).toBeNull()
    expect(profile.portfolio).toEqual({ skills: [], projects: [], experiences: [], education: [] })
    expect(profile).toMatchObject({ sellerLevel: 'new', buyerRating: 0, buyerReviewsCount: 0, stats: { servicesCount: 0, completedOrdersCount: 0, averageRating: 0, reviewsCount: 0 } })
  })

  it('shows the seller level the evaluation recorded, at the top of the profile', async () => {
    const { user } = await createUser(ctx)
    await ctx.database.db.update(users).set({ sellerLevel: 'top_rated' }).where(eq(users.id, user.id))
    expect((await request(ctx.app, { method: 'GET', url: `/users/${user.id}` })).json().data.sellerLevel).toBe('top_rated')
  })

  it('is 404 NOT_FOUND for an inactive user, an unknown id and a malformed id', async () => {
    const { user } = await createUser(ctx, { isActive: false })
    for (const id of [user.id, randomUUID(), 'not-a-uuid']) {
      const response = await request(ctx.app, { method: 'GET', url: `/users/${id}` })
      expect(response.statusCode).toBe(404)
      expect(response.json().error.code).toBe('NOT_FOUND')
    }
  })
})
