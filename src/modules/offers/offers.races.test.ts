import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { makeOffer, offerMove, offerParties } from '../../../test/factories/offers.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { orders } from '../orders/orders.table.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { offers } from './offers.table.ts'

const wallet = async (ctx: TestContext, token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data as { balance: number; escrow: number }

/** Offers under concurrency: the offer's row lock decides, at most one order is placed, and the books balance after each test. */
describe('offers under concurrency', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const ordersOf = (offerId: string) => ctx.database.db.select().from(orders).where(eq(orders.offerId, offerId))

  it('two accepts at the same moment place one order and take the money once', async () => {
    for (let round = 0; round < 3; round++) {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties, { price: 100 })
      const answers = await Promise.all([offerMove(ctx, parties.buyer, offer.id, 'accept'), offerMove(ctx, parties.buyer, offer.id, 'accept')])
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 422])
      expect(answers.find((answer) => answer.statusCode === 422)!.json().error.code).toBe('INVALID_TRANSITION')
      const placed = await ordersOf(offer.id)
      expect(placed).toHaveLength(1)
      expect(await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, placed[0]!.id))).toHaveLength(1)
      expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 400, escrow: 100 })
    }
  })

  it('an accept and a withdraw at the same moment: one wins, and an order exists only if the accept did', async () => {
    for (let round = 0; round < 3; round++) {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties, { price: 100 })
      const [accept, withdraw] = await Promise.all([offerMove(ctx, parties.buyer, offer.id, 'accept'), offerMove(ctx, parties.seller, offer.id, 'withdraw')])
      const [row] = await ctx.database.db.select().from(offers).where(eq(offers.id, offer.id))
      if (accept.statusCode === 201) {
        expect(withdraw.statusCode, withdraw.body).toBe(422)
        expect(row).toMatchObject({ status: 'accepted', orderId: accept.json().data.id })
        expect(await ordersOf(offer.id)).toHaveLength(1)
        expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 400, escrow: 100 })
      } else {
        expect(accept.statusCode, accept.body).toBe(422)
        expect(withdraw.statusCode, withdraw.body).toBe(200)
        expect(row).toMatchObject({ status: 'withdrawn', orderId: null })
        expect(await ordersOf(offer.id)).toEqual([])
        expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
      }
    }
  })

  it('an accept after a withdraw places nothing', async () => {
    const parties = await offerParties(ctx)
    const offer = await makeOffer(ctx, parties)
    expect((await offerMove(ctx, parties.seller, offer.id, 'withdraw')).statusCode).toBe(200)
    expect((await offerMove(ctx, parties.buyer, offer.id, 'accept')).statusCode).toBe(422)
    expect(await ordersOf(offer.id)).toEqual([])
  })

  it('50 accepts at once with one Idempotency-Key place one order; every success is the same order, the rest are told the key is in use', async () => {
    const parties = await offerParties(ctx)
    const offer = await makeOffer(ctx, parties, { price: 100 })
    const headers = { 'idempotency-key': `accept-burst-${offer.id}` }
    const answers = await Promise.all(Array.from({ length: 50 }, () => offerMove(ctx, parties.buyer, offer.id, 'accept', {}, headers)))
    const placed = await ordersOf(offer.id)
    expect(placed).toHaveLength(1)
    for (const answer of answers) {
      if (answer.statusCode === 201) expect(answer.json().data.id).toBe(placed[0]!.id)
      else expect([answer.statusCode, answer.json().error.code]).toEqual([409, 'IDEMPOTENCY_KEY_IN_USE'])
    }
    expect(answers.filter((answer) => answer.statusCode === 201).length).toBeGreaterThanOrEqual(1)
    // A retry after the burst replays the order.
    const retry = await offerMove(ctx, parties.buyer, offer.id, 'accept', {}, headers)
    expect([retry.statusCode, retry.json().data.id]).toEqual([201, placed[0]!.id])
    expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 400, escrow: 100 })
  })

  it('50 accepts at once without a key place one order too', async () => {
    const parties = await offerParties(ctx)
    const offer = await makeOffer(ctx, parties, { price: 100 })
    const answers = await Promise.all(Array.from({ length: 50 }, () => offerMove(ctx, parties.buyer, offer.id, 'accept')))
    expect(answers.filter((answer) => answer.statusCode === 201)).toHaveLength(1)
    expect(answers.filter((answer) => answer.statusCode === 422)).toHaveLength(49)
    expect(await ordersOf(offer.id)).toHaveLength(1)
    expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 400, escrow: 100 })
  })
})
