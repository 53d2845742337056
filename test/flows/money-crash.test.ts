import { eq, sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { deposits } from '../../src/modules/wallet/deposits.table.ts'
import { ledgerTransactions } from '../../src/modules/wallet/ledger.table.ts'
import { payouts } from '../../src/modules/wallet/payouts.table.ts'
import { users } from '../../src/modules/users/users.table.ts'
import { createUser } from '../factories/users.ts'
import { crashServer } from '../setup/crash-server.ts'
import { freePort } from '../setup/ports.ts'

const url = process.env.TEST_DATABASE_URL

/**
 * A SIGKILL in the middle of a burst of money requests: afterwards the books balance
 * and no request is half-applied. PostgreSQL only: the server runs as its own process.
 */
describe.runIf(url)('a crash in the middle of money requests', () => {
  const crash = crashServer(url!, 'crash')

  it('leaves the ledger balanced and every request applied whole or not at all', async () => {
    const owner = await createUser(crash.ctx)
    await crash.ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, owner.user.id))
    const port = await freePort()
    let server = crash.start(port)
    await crash.ready(port)

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
    await expect.poll(async () => (await crash.ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(ledgerTransactions))[0]!.n, { timeout: 30_000, interval: 20 }).toBeGreaterThan(20)
    server.kill('SIGKILL')
    const statuses = await Promise.all(burst)
    expect(statuses.filter((status) => status >= 500)).toEqual([])
    // The kill did cut requests off (0: no answer).
    expect(statuses.filter((status) => status === 0).length).toBeGreaterThan(0)

    const check = await crash.ctx.app.container.wallet.checkLedger()
    expect(check.problems).toEqual([])
    // Every payout has the transfer that moved its amount, every succeeded deposit its credit.
    const payoutRows = await crash.ctx.database.db.select().from(payouts).where(eq(payouts.userId, owner.user.id))
    const payoutTransfers = await crash.ctx.database.db.select().from(ledgerTransactions).where(sql`${ledgerTransactions.payoutId} is not null`)
    expect(payoutTransfers.map((row) => row.payoutId).sort()).toEqual(payoutRows.map((row) => row.id).sort())
    const depositRows = await crash.ctx.database.db.select().from(deposits).where(eq(deposits.userId, owner.user.id))
    const credited = new Set((await crash.ctx.database.db.select().from(ledgerTransactions).where(sql`${ledgerTransactions.depositId} is not null`)).map((row) => row.depositId))
    for (const row of depositRows) expect(credited.has(row.id), `deposit ${row.id} is ${row.status}`).toBe(row.status === 'succeeded')
    const balances = await crash.ctx.app.container.wallet.ledger.balancesOf(crash.ctx.database.db, owner.user.id)
    expect(balances.payout_pending).toBe(payoutRows.length * 1000)
    expect(balances.available).toBe(depositRows.filter((row) => row.status === 'succeeded').length * 2000 - payoutRows.length * 1000)

    // And the server starts again on the same database.
    server = crash.start(port)
    try {
      await crash.ready(port)
    } finally {
      server.kill('SIGTERM')
    }
  }, 120_000)
})
