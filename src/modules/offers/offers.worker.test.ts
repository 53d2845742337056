import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeOffer, offerMove, offerParties } from '../../../test/factories/offers.ts'
import { orderIn } from '../../../test/factories/orders.ts'
import { createSuperuser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { SECOND } from '../../lib/clock.ts'

/** A deployment with a window of seconds: WORKER_TICK_SECONDS=1 and TIP_DAYS of about 8.6 seconds. */
describe('offers and tips with short windows, through the worker and the event log', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { WORKER_TICK_SECONDS: '1', TIP_DAYS: '0.0001' } })
  })
  afterAll(() => ctx.close())

  it('runs the expiry and auto-completion checks every tick, and the offer events reach the event log', async () => {
    const admin = await createSuperuser(ctx)
    const { worker } = ctx.app.container
    expect(await worker.runPeriodic()).toEqual(expect.arrayContaining(['expire-offers', 'auto-complete-orders']))
    ctx.clock.advance(SECOND / 2)
    expect(await worker.runPeriodic()).not.toContain('expire-offers')
    ctx.clock.advance(SECOND / 2)
    expect(await worker.runPeriodic()).toEqual(expect.arrayContaining(['expire-offers', 'auto-complete-orders']))

    const parties = await offerParties(ctx)
    const accepted = await makeOffer(ctx, parties)
    const declined = await makeOffer(ctx, parties)
    const withdrawn = await makeOffer(ctx, parties)
    const expiring = await makeOffer(ctx, parties, { expiresInDays: 1 })
    expect((await offerMove(ctx, parties.buyer, accepted.id, 'accept')).statusCode).toBe(201)
    expect((await offerMove(ctx, parties.buyer, declined.id, 'decline')).statusCode).toBe(200)
    expect((await offerMove(ctx, parties.seller, withdrawn.id, 'withdraw')).statusCode).toBe(200)
    ctx.clock.advance(24 * 3600 * SECOND)
    expect(await worker.runPeriodic()).toContain('expire-offers')
    await worker.drain()
    const log = await request(ctx.app, { method: 'GET', url: '/admin/events?limit=100', token: (await ctx.app.container.auth.issueSession(admin.user)).accessToken })
    expect(log.statusCode, log.body).toBe(200)
    const logged = (log.json().data.items as { event: string; data: { offerId?: string } }[]).filter((item) => item.event.startsWith('offer.')).map((item) => `${item.event} ${item.data.offerId}`)
    expect(logged).toEqual([
      `offer.created ${accepted.id}`,
      `offer.created ${declined.id}`,
      `offer.created ${withdrawn.id}`,
      `offer.created ${expiring.id}`,
      `offer.accepted ${accepted.id}`,
      `offer.declined ${declined.id}`,
      `offer.withdrawn ${withdrawn.id}`,
      `offer.expired ${expiring.id}`,
    ])
    await expectBooksBalance(ctx)
  })

  it('closes the tip window after TIP_DAYS as a fraction of a day', async () => {
    const placed = await orderIn(ctx, 'completed')
    ctx.clock.advance(8 * SECOND)
    const open = await request(ctx.app, { method: 'POST', url: `/orders/${placed.orderId}/tip`, token: placed.buyer.accessToken, payload: { amount: 2 } })
    expect(open.statusCode, open.body).toBe(200)
    const late = await orderIn(ctx, 'completed')
    ctx.clock.advance(9 * SECOND)
    const closed = await request(ctx.app, { method: 'POST', url: `/orders/${late.orderId}/tip`, token: late.buyer.accessToken, payload: { amount: 2 } })
    expect([closed.statusCode, closed.json().error.code]).toEqual([422, 'TIP_WINDOW_CLOSED'])
    await expectBooksBalance(ctx)
  })
})
