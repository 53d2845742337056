import { eq, sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { offers } from '../../src/modules/offers/offers.table.ts'
import { orders } from '../../src/modules/orders/orders.table.ts'
import { clearances } from '../../src/modules/wallet/clearance.table.ts'
import { ledgerTransactions } from '../../src/modules/wallet/ledger.table.ts'
import { makeOffer, offerParties } from '../factories/offers.ts'
import { orderIn } from '../factories/orders.ts'
import { crashServer } from '../setup/crash-server.ts'
import { freePort } from '../setup/ports.ts'

const url = process.env.TEST_DATABASE_URL

/**
 * A SIGKILL in the middle of a burst of offer accepts, tips and the worker's clearance of earnings:
 * afterwards the books balance, every acknowledged write is there and none is half-applied.
 * PostgreSQL only: the server runs as its own process.
 */
describe.runIf(url)('a crash in the middle of offer accepts, tips and clearances', () => {
  // Earnings clear a day after they are credited; the arranged ones are made due before the burst.
  const crash = crashServer(url!, 'offers-crash', { env: { CLEARANCE_DAYS: '1' } })

  it('leaves the ledger balanced, each accepted offer with its one order, each tip whole and each earning cleared once or not at all', async () => {
    const parties = await offerParties(crash.ctx, 10_000)
    const made = []
    for (let index = 0; index < 60; index++) made.push(await makeOffer(crash.ctx, parties, { price: 50 }))
    const completed = []
    for (let index = 0; index < 12; index++) completed.push(await orderIn(crash.ctx, 'completed', { buyer: parties.buyer }))
    for (let index = 0; index < 30; index++) await orderIn(crash.ctx, 'completed')
    // The earnings credited so far fall due over the next seconds: the server's worker, ticking every second, clears them during the burst.
    const due = await crash.ctx.database.db.update(clearances).set({ availableAt: sql`now() + random() * interval '8 seconds'` }).returning({ id: clearances.id })
    expect(due.length).toBe(42)
    const port = await freePort()
    let server = crash.start(port, { RUN_WORKER: 'true', WORKER_TICK_SECONDS: '1' })
    await crash.ready(port)

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
    await expect.poll(async () => (await crash.ctx.database.db.select({ n: sql<number>`count(*)::int` }).from(orders).where(sql`${orders.offerId} is not null`))[0]!.n, { timeout: 30_000, interval: 20 }).toBeGreaterThan(5)
    server.kill('SIGKILL')
    const answered = await Promise.all([...accepts, ...tips])
    expect(answered.filter((answer) => answer.status >= 500)).toEqual([])
    // The kill did cut requests off (0: no answer).
    expect(answered.filter((answer) => answer.status === 0).length).toBeGreaterThan(0)

    const check = await crash.ctx.app.container.wallet.checkLedger()
    expect(check.problems).toEqual([])
    // Every acknowledged accept placed its order, and every offer is accepted exactly when it has one order with its payment.
    const offerRows = await crash.ctx.database.db.select().from(offers).where(eq(offers.conversationId, parties.conversationId))
    const orderRows = await crash.ctx.database.db.select().from(orders).where(sql`${orders.offerId} is not null`)
    for (const answer of answered) {
      if ('offerId' in answer && answer.status === 201) expect(orderRows.find((row) => row.offerId === answer.offerId)?.id).toBe(answer.body?.data?.id)
    }
    for (const offer of offerRows) {
      const placed = orderRows.filter((row) => row.offerId === offer.id)
      expect(placed, `offer ${offer.id} is ${offer.status}`).toHaveLength(offer.status === 'accepted' ? 1 : 0)
      if (placed[0]) {
        expect(offer.orderId).toBe(placed[0].id)
        const payments = await crash.ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, placed[0].id))
        expect(payments.map((row) => row.type)).toEqual(['order_payment'])
      }
    }
    // Every acknowledged tip is there; a tip is on its order exactly when its two transactions are.
    for (const order of completed) {
      const [row] = await crash.ctx.database.db.select().from(orders).where(eq(orders.id, order.orderId))
      const moves = (await crash.ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, order.orderId))).map((move) => move.type).filter((type) => type.startsWith('tip')).sort()
      expect(moves, `order ${order.orderId}`).toEqual(row!.tipCents === null ? [] : ['tip', 'tip_earning'])
      if (answered.some((answer) => 'orderId' in answer && answer.orderId === order.orderId && answer.status === 200)) expect(row!.tipCents).toBe(300)
    }

    // Each earning cleared exactly when its one clearance transaction exists, and moved what it held then.
    const earnings = await crash.ctx.database.db.select().from(clearances)
    const clearanceMoves = await crash.ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.type, 'clearance'))
    for (const earning of earnings) {
      const moves = clearanceMoves.filter((move) => move.id === earning.clearanceTransactionId)
      expect(moves, `earning ${earning.id}`).toHaveLength(earning.clearanceTransactionId === null ? 0 : 1)
      expect(earning.settledAt === null, `earning ${earning.id}`).toBe(earning.clearanceTransactionId === null)
    }
    expect(new Set(earnings.map((earning) => earning.clearanceTransactionId).filter(Boolean)).size).toBe(clearanceMoves.length)

    // And the server starts again on the same database.
    server = crash.start(port)
    try {
      await crash.ready(port)
    } finally {
      server.kill('SIGTERM')
    }
  }, 180_000)
})
