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
import { offers } from '../../src/modules/offers/offers.table.ts'
import { orders } from '../../src/modules/orders/orders.table.ts'
import { ledgerTransactions } from '../../src/modules/wallet/ledger.table.ts'
import { makeOffer, offerParties } from '../factories/offers.ts'
import { orderIn } from '../factories/orders.ts'
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
 * A SIGKILL in the middle of a burst of offer accepts and tips: afterwards the books balance, every
 * acknowledged write is there and none is half-applied. PostgreSQL only: the server runs as its
 * own process.
 */
describe.runIf(url)('a crash in the middle of offer accepts and tips', () => {
  let name: string
  let database: Database
  let ctx: TestContext
  let admin: pg.Client
  const dataDir = mkdtempSync(join(tmpdir(), 'marketplace-offers-crash-'))
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

  it('leaves the ledger balanced, each accepted offer with its one order and each tip whole', async () => {
    const parties = await offerParties(ctx, 10_000)
    const made = []
    for (let index = 0; index < 60; index++) made.push(await makeOffer(ctx, parties, { price: 50 }))
    const completed = []
    for (let index = 0; index < 12; index++) completed.push(await orderIn(ctx, 'completed', { buyer: parties.buyer }))
    const port = await freePort()
    let server = startServer(port)
    await until(port)

    const post = (path: string, body: object, key: string) =>
      fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${parties.buyer.accessToken}`, 'idempotency-key': key },
        body: JSON.stringify(body),
      })
        .then(async (response) => ({ status: response.status, body: (await response.json().catch(() => null)) as { data?: { id: string } } | null }))
        .catch(() => ({ status: 0, body: null }))
    const accepts = made.flatMap((offer) => [0, 1].map(() => post(`/offers/${offer.id}/accept`, {}, `accept-${offer.id}`).then((answer) => ({ ...answer, offerId: offer.id }))))
    const tips = completed.flatMap((order) => [0, 1].map(() => post(`/orders/${order.orderId}/tip`, { amount: 3 }, `tip-${order.orderId}`).then((answer) => ({ ...answer, orderId: order.orderId }))))
    // Kill it once some requests have been answered and others are still in flight.
    await expect.poll(async () => (await ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(orders).where(sql`${orders.offerId} is not null`))[0]!.n, { timeout: 30_000, interval: 20 }).toBeGreaterThan(5)
    server.kill('SIGKILL')
    const answered = await Promise.all([...accepts, ...tips])
    expect(answered.filter((answer) => answer.status >= 500)).toEqual([])
    // The kill did cut requests off (0: no answer).
    expect(answered.filter((answer) => answer.status === 0).length).toBeGreaterThan(0)

    const check = await ctx.app.container.wallet.checkLedger()
    expect(check.problems).toEqual([])
    // Every acknowledged accept placed its order, and every offer is accepted exactly when it has one order with its payment.
    const offerRows = await ctx.database.db.select().from(offers).where(eq(offers.conversationId, parties.conversationId))
    const orderRows = await ctx.database.db.select().from(orders).where(sql`${orders.offerId} is not null`)
    for (const answer of answered) {
      if ('offerId' in answer && answer.status === 201) expect(orderRows.find((row) => row.offerId === answer.offerId)?.id).toBe(answer.body?.data?.id)
    }
    for (const offer of offerRows) {
      const placed = orderRows.filter((row) => row.offerId === offer.id)
      expect(placed, `offer ${offer.id} is ${offer.status}`).toHaveLength(offer.status === 'accepted' ? 1 : 0)
      if (placed[0]) {
        expect(offer.orderId).toBe(placed[0].id)
        const payments = await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, placed[0].id))
        expect(payments.map((row) => row.type)).toEqual(['order_payment'])
      }
    }
    // Every acknowledged tip is there; a tip is on its order exactly when its two transactions are.
    for (const order of completed) {
      const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, order.orderId))
      const moves = (await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, order.orderId))).map((move) => move.type).filter((type) => type.startsWith('tip')).sort()
      expect(moves, `order ${order.orderId}`).toEqual(row!.tipCents === null ? [] : ['tip', 'tip_earning'])
      if (answered.some((answer) => 'orderId' in answer && answer.orderId === order.orderId && answer.status === 200)) expect(row!.tipCents).toBe(300)
    }

    // And the server starts again on the same database.
    server = startServer(port)
    try {
      await until(port)
    } finally {
      server.kill('SIGTERM')
    }
  }, 180_000)
})
