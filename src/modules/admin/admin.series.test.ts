import { and, eq, isNull } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { orderIn, renewSessions } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { ledgerAccounts } from '../wallet/ledger.table.ts'

describe('GET /admin/stats/series', () => {
  let ctx: TestContext
  let staff: TestUser
  let client: TestUser

  beforeAll(async () => {
    ctx = await createTestApp()
    staff = await createUser(ctx, { isStaff: true })
    client = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  const get = (query: string, token = staff.accessToken) => request(ctx.app, { method: 'GET', url: `/admin/stats/series${query}`, token })
  const series = async (metric: string, days = 30) => {
    const response = await get(`?metric=${metric}&days=${days}`)
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data as { metric: string; unit: string; total: number; points: { date: string; value: number }[] }
  }
  const today = () => ctx.clock.now().toISOString().slice(0, 10)
  const last = (points: { value: number }[]) => points.at(-1)!.value
  const revenueBalance = async () =>
    // The platform's revenue is spread over sub-accounts: their sum is its balance.
    (await ctx.database.db.select().from(ledgerAccounts).where(and(eq(ledgerAccounts.kind, 'revenue'), isNull(ledgerAccounts.ownerId)))).reduce((sum, row) => sum + row.balanceCents, 0)

  it('answers one point per day, oldest first, ending today (UTC), with 0 for days without any', async () => {
    const data = await series('signups', 7)
    expect(data).toMatchObject({ metric: 'signups', unit: 'count' })
    expect(data.points).toHaveLength(7)
    expect(data.points.at(-1)!.date).toBe(today())
    expect(data.points[0]!.date).toBe(new Date(ctx.clock.now().getTime() - 6 * DAY).toISOString().slice(0, 10))
    for (const point of data.points) expect(Object.keys(point).sort()).toEqual(['date', 'value'])
    expect(data.total).toBe(data.points.reduce((sum, point) => sum + point.value, 0))
    expect(data.points.slice(0, 6).every((point) => point.value === 0)).toBe(true)
  })

  it('counts sign-ups and orders placed today, and platform revenue as the revenue account moves', async () => {
    const [signupsBefore, ordersBefore, revenueBefore, balanceBefore] = [await series('signups'), await series('orders'), await series('revenue'), await revenueBalance()]
    await orderIn(ctx, 'completed')
    const [signupsAfter, ordersAfter, revenueAfter, balanceAfter] = [await series('signups'), await series('orders'), await series('revenue'), await revenueBalance()]
    expect(last(signupsAfter.points) - last(signupsBefore.points)).toBeGreaterThanOrEqual(2)
    await createUser(ctx)
    expect(last((await series('signups')).points) - last(signupsAfter.points)).toBe(1)
    expect(last(ordersAfter.points) - last(ordersBefore.points)).toBe(1)
    expect(ordersAfter.total - ordersBefore.total).toBe(1)
    expect(revenueAfter.unit).toBe('cents')
    expect(balanceAfter - balanceBefore).toBeGreaterThan(0)
    expect(last(revenueAfter.points) - last(revenueBefore.points)).toBe(balanceAfter - balanceBefore)
  })

  it('refuses a caller without a token (401) and a client (403)', async () => {
    expectError(await request(ctx.app, { method: 'GET', url: '/admin/stats/series?metric=orders' }), 401, 'UNAUTHENTICATED')
    expectError(await get('?metric=orders', client.accessToken), 403, 'FORBIDDEN')
  })

  it('refuses an unknown metric, a missing one and a day count out of range, naming the field (400)', async () => {
    expectError(await get('?metric=visits'), 400, 'VALIDATION_ERROR', ['metric'])
    expectError(await get(''), 400, 'VALIDATION_ERROR', ['metric'])
    expectError(await get('?metric=orders&days=0'), 400, 'VALIDATION_ERROR', ['days'])
    expectError(await get('?metric=orders&days=367'), 400, 'VALIDATION_ERROR', ['days'])
    expectError(await get('?metric=orders&days=2.5'), 400, 'VALIDATION_ERROR', ['days'])
  })

  it('moves a day along the window as time passes, and defaults to 30 days', async () => {
    const before = await series('orders', 30)
    ctx.clock.advance(DAY)
    await renewSessions(ctx, staff)
    const after = await get('?metric=orders')
    expect(after.statusCode).toBe(200)
    const points = after.json().data.points as { date: string; value: number }[]
    expect(points).toHaveLength(30)
    expect(points.at(-1)).toEqual({ date: today(), value: 0 })
    expect(points.at(-2)).toEqual(before.points.at(-1))
  })
})
