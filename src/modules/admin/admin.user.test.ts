import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

describe('GET /admin/users/{userId}', () => {
  let ctx: TestContext
  let viewer: TestUser
  let bareStaff: TestUser
  let client: TestUser

  beforeAll(async () => {
    ctx = await createTestApp()
    viewer = await createUser(ctx, { permissions: ['view_users'] })
    bareStaff = await createUser(ctx, { isStaff: true })
    client = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  const get = (userId: string, token?: string) => request(ctx.app, { method: 'GET', url: `/admin/users/${userId}`, token })

  it('answers the account as the staff listing shows it, its suspension included', async () => {
    const manager = await createUser(ctx, { permissions: ['manage_users'] })
    const target = await createUser(ctx)
    const suspended = await request(ctx.app, { method: 'POST', url: `/admin/users/${target.user.id}/suspend`, token: manager.accessToken, payload: { reason: 'Spam' } })
    expect(suspended.statusCode, suspended.body).toBe(200)
    const response = await get(target.user.id, viewer.accessToken)
    expect(response.statusCode, response.body).toBe(200)
    const listed = await request(ctx.app, { method: 'GET', url: `/admin/users?search=${encodeURIComponent(target.user.email)}`, token: viewer.accessToken })
    const { roles, ...account } = response.json().data
    expect(account).toEqual(listed.json().data.items[0])
    expect(roles).toEqual([])
    expect(response.json().data).toMatchObject({ id: target.user.id, email: target.user.email, status: 'suspended', suspensionReason: 'Spam', servicesCount: 0 })
    expect(response.json().data).not.toHaveProperty('passwordHash')
  })

  it("lists a staff member's roles", async () => {
    const response = await get(viewer.user.id, viewer.accessToken)
    expect(response.statusCode, response.body).toBe(200)
    const roles = response.json().data.roles as { name: string; permissions: string[] }[]
    expect(roles).toHaveLength(1)
    expect(roles[0]!.permissions).toEqual(['view_users'])
  })

  it('refuses a caller without a token (401), staff without view_users and a client (403)', async () => {
    expectError(await get(client.user.id), 401, 'UNAUTHENTICATED')
    expectError(await get(client.user.id, bareStaff.accessToken), 403, 'FORBIDDEN')
    expectError(await get(viewer.user.id, client.accessToken), 403, 'FORBIDDEN')
  })

  it('answers 404 for an unknown id and for one that is not an id', async () => {
    expectError(await get(UNKNOWN_ID, viewer.accessToken), 404, 'NOT_FOUND')
    expectError(await get('not-an-id', viewer.accessToken), 404, 'NOT_FOUND')
  })
})
