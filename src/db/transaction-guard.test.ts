import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, testConfig, type TestContext } from '../../test/setup/test-app.ts'
import { createContainer } from '../container.ts'
import { ManualClock } from '../lib/clock.ts'
import { MemoryMailer } from '../../test/setup/test-app.ts'
import { createInProcessHub } from '../platform/realtime/in-process-hub.ts'
import { createStorage } from '../platform/storage/create-storage.ts'
import { users } from '../modules/users/users.table.ts'
import { OuterDatabaseInTransactionError } from './transaction-guard.ts'

describe('the outer database inside a transaction', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  it('throws at once, naming the call, instead of hanging (PGlite) or escaping the transaction (PostgreSQL)', async () => {
    const { db } = ctx.app.container
    const attempt = db.transaction(async (tx) => {
      await tx.select().from(users).limit(1)
      await db.select().from(users).limit(1)
    })
    await expect(attempt).rejects.toThrow(OuterDatabaseInTransactionError)
    await expect(
      db.transaction(async () => {
        await db.execute(sql`select 1`)
      }),
    ).rejects.toThrow(/db\.execute\(\) was called on the outer database inside a transaction/)
  })

  it('refuses a second top-level transaction opened from inside one (a savepoint is tx.transaction)', async () => {
    const { db } = ctx.app.container
    await expect(db.transaction(() => db.transaction(async () => undefined))).rejects.toThrow(/db\.transaction\(\)/)
    await expect(db.transaction((tx) => tx.transaction(async (savepoint) => savepoint.execute(sql`select 1`)))).resolves.toBeDefined()
  })

  it('leaves the database usable afterwards, and concurrent transactions of other requests alone', async () => {
    const { db } = ctx.app.container
    const results = await Promise.all([
      db.transaction(async (tx) => (await tx.execute(sql`select 1 as one`)) !== undefined),
      db.select({ id: users.id }).from(users).limit(1),
      db.transaction(async (tx) => (await tx.execute(sql`select 2 as two`)) !== undefined),
    ])
    expect(results[0]).toBe(true)
    expect(results[2]).toBe(true)
  })

  it('is not installed in production, where the bare handle serves every query', async () => {
    const config = { ...testConfig(), isProduction: true }
    const container = createContainer({ config, db: ctx.database.db, clock: new ManualClock(), mailer: new MemoryMailer(), storage: createStorage(config.storage), realtime: createInProcessHub(config.realtime), logger: ctx.app.log })
    expect(container.db).toBe(ctx.database.db)
    expect(ctx.app.container.db).not.toBe(ctx.database.db)
  })
})
