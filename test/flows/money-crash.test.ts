import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { eq, sql } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { fromPool, type Database } from '../../src/db/client.ts'
import { deposits } from '../../src/modules/wallet/deposits.table.ts'
import { ledgerTransactions } from '../../src/modules/wallet/ledger.table.ts'
import { payouts } from '../../src/modules/wallet/payouts.table.ts'
import { users } from '../../src/modules/users/users.table.ts'
import { createUser } from '../factories/users.ts'
import { withDatabase } from '../setup/global-setup.ts'
import { createTestApp, testConfig, type TestContext } from '../setup/test-app.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const url = process.env.TEST_DATABASE_URL

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * A SIGKILL in the middle of a burst of money requests: afterwards the books balance
 * and no request is half-applied. PostgreSQL only: the server runs as its own process.
 */
describe.runIf(url)('a crash in the middle of money requests', () => {
  let name: string
  let database: Database
  let ctx: TestContext
  let admin: pg.Client
  const dataDir = mkdtempSync(join(tmpdir(), 'marketplace-crash-'))
  const config = testConfig()

  beforeAll(async () => {
    name = `mk_${inject('pgTemplate').split('_')[2]}_${randomBytes(6).toString('hex')}`
    admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`create database ${name} template ${inject('pgTemplate')}`)
    database = fromPool(new pg.Pool({ connectionString: withDatabase(url!, name), max: 4 }))
    ctx = await createTestApp({ database })
  })
  afterAll(async () => {
    await ctx.app.close()
    await database.close()
    await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
    rmSync(dataDir, { recursive: true, force: true })
  })

  function startServer(port: number): ChildProcess {
    return spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      stdio: 'ignore',
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        DATABASE_URL: withDatabase(url!, name),
        JWT_ACCESS_SECRET: config.jwt.accessSecret,
        JWT_REFRESH_SECRET: config.jwt.refreshSecret,
        FILE_SIGNING_SECRET: config.fileSigning.secret,
        RATE_LIMIT_GENERAL: '100000',
        RUN_WORKER: 'false',
        LOG_LEVEL: 'silent',
      },
    })
  }

  const until = async (port: number) => {
    await expect.poll(async () => (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.status, { timeout: 60_000, interval: 100 }).toBe(200)
  }

  it('leaves the ledger balanced and every request applied whole or not at all', async () => {
    const owner = await createUser(ctx)
    await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, owner.user.id))
    const port = await freePort()
    let server = startServer(port)
    await until(port)

    const post = (path: string, body: object) =>
      fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.accessToken}` },
        body: JSON.stringify(body),
      })
        .then((response) => response.status)
        .catch(() => 0)
    const burst = Array.from({ length: 300 }, (_, index) => (index % 3 === 0 ? post('/wallet/deposits', { amount: 20 }) : post('/wallet/payout', { amount: 10, method: 'paypal', details: { email: 'me@example.test' } })))
    // Kill it once some requests have been answered and others are still in flight.
    await expect.poll(async () => (await ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(ledgerTransactions))[0]!.n, { timeout: 30_000, interval: 20 }).toBeGreaterThan(20)
    server.kill('SIGKILL')
    const statuses = await Promise.all(burst)
    expect(statuses.filter((status) => status >= 500)).toEqual([])
    // The kill did cut requests off (0: no answer).
    expect(statuses.filter((status) => status === 0).length).toBeGreaterThan(0)

    const check = await ctx.app.container.wallet.checkLedger()
    expect(check.problems).toEqual([])
    // Every payout has the transfer that moved its amount, every succeeded deposit its credit.
    const payoutRows = await ctx.database.db.select().from(payouts).where(eq(payouts.userId, owner.user.id))
    const payoutTransfers = await ctx.database.db.select().from(ledgerTransactions).where(sql`${ledgerTransactions.payoutId} is not null`)
    expect(payoutTransfers.map((row) => row.payoutId).sort()).toEqual(payoutRows.map((row) => row.id).sort())
    const depositRows = await ctx.database.db.select().from(deposits).where(eq(deposits.userId, owner.user.id))
    const credited = new Set((await ctx.database.db.select().from(ledgerTransactions).where(sql`${ledgerTransactions.depositId} is not null`)).map((row) => row.depositId))
    for (const row of depositRows) expect(credited.has(row.id), `deposit ${row.id} is ${row.status}`).toBe(row.status === 'succeeded')
    const balances = await ctx.app.container.wallet.ledger.balancesOf(ctx.database.db, owner.user.id)
    expect(balances.payout_pending).toBe(payoutRows.length * 1000)
    expect(balances.available).toBe(depositRows.filter((row) => row.status === 'succeeded').length * 2000 - payoutRows.length * 1000)

    // And the server starts again on the same database.
    server = startServer(port)
    try {
      await until(port)
    } finally {
      server.kill('SIGTERM')
    }
  }, 120_000)
})
