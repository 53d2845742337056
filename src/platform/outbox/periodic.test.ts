import { count } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { revokedTokens } from '../../modules/auth/auth.table.ts'
import { HOUR, MINUTE } from '../../lib/clock.ts'
import { createUser } from '../../../test/factories/users.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'

describe('periodic housekeeping in the worker', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  const revokedCount = async () => (await ctx.database.db.select({ total: count() }).from(revokedTokens))[0]!.total

  it('purges revoked token ids once the tokens would have expired anyway, at most once an hour', async () => {
    const { accessToken } = await createUser(ctx)
    expect((await request(ctx.app, { method: 'POST', url: '/auth/logout', token: accessToken })).statusCode).toBe(200)
    expect(await revokedCount()).toBe(1)

    // The token is still within its 15 minutes: the first run keeps its revocation.
    expect(await ctx.app.container.worker.runPeriodic()).toContain('purge-revoked-tokens')
    expect(await revokedCount()).toBe(1)

    ctx.clock.advance(16 * MINUTE)
    expect(await ctx.app.container.worker.runPeriodic()).not.toContain('purge-revoked-tokens')
    expect(await revokedCount()).toBe(1)

    ctx.clock.advance(HOUR)
    expect(await ctx.app.container.worker.runPeriodic()).toContain('purge-revoked-tokens')
    expect(await revokedCount()).toBe(0)
  })
})
