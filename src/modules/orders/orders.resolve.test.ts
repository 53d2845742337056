import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { moveOrder, orderIn, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { untilAQueryWaitsForALock } from '../../../test/setup/locks.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { auditLog } from '../audit/audit.table.ts'
import { createLedgerRepository } from '../wallet/ledger.repository.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { orders } from './orders.table.ts'

const NOTE = 'The logo was delivered without the source files the package promised.'

/** Split dispute outcomes: the escrow divided between buyer, seller and platform, once, with its records. */
describe('POST /admin/orders/{orderId}/resolve', () => {
  let ctx: TestContext
  let arbiter: TestUser
  let viewer: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    arbiter = await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] })
    viewer = await createUser(ctx, { permissions: ['view_orders', 'manage_orders'] })
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  /** `token` null: no token at all. */
  const resolve = (orderId: string, payload: object, token: string | null = arbiter.accessToken) =>
    request(ctx.app, { method: 'POST', url: `/admin/orders/${orderId}/resolve`, token: token ?? undefined, payload })
  const wallet = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number }
  const revenue = () => createLedgerRepository(ctx.database.db).platformBalance('revenue')
  const moneyOf = (orderId: string) => ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, orderId))
  const auditOf = (orderId: string) => ctx.database.db.select().from(auditLog).where(eq(auditLog.targetId, orderId))
  const eventsOf = async (orderId: string) =>
    (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event')))
      .map((row) => row.payload as { event: string; data: Record<string, unknown> })
      .filter((payload) => payload.data.orderId === orderId)
  const drainOutbox = async () => {
    while ((await ctx.app.container.worker.runOnce()).processed > 0);
  }

  /** Buyer, seller and revenue after a split of the Basic order (100.00 in escrow, fee 10.00). */
  async function expectBalances(placed: PlacedOrder, revenueBefore: number, expected: { buyer: number; seller: number; fee: number }) {
    expect(await wallet(placed.buyer)).toMatchObject({ balance: expected.buyer, escrow: 0 })
    expect(await wallet(placed.seller)).toMatchObject({ balance: expected.seller, escrow: 0 })
    expect((await revenue()) - revenueBefore).toBe(Math.round(expected.fee * 100))
  }

  it('refunds part to the buyer, pays the rest to the seller minus the fee on it, and completes the order with its records', async () => {
    const placed = await orderIn(ctx, 'disputed')
    const revenueBefore = await revenue()
    const resolved = await resolve(placed.orderId, { refundAmount: 40, note: NOTE })
    expect(resolved.statusCode, resolved.body).toBe(200)
    const order = resolved.json().data
    expect(order).toMatchObject({ id: placed.orderId, status: 'completed', statusReason: NOTE, completedAt: ctx.clock.now().toISOString(), cancelledAt: null, allowedActions: [] })
    // The answer's figures are the money that moved, to the buyer read the same as to staff.
    expect(order).toMatchObject({ total: 100, refunded: 40, platformFee: 6, sellerEarning: 54 })
    const asBuyer = await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: placed.buyer.accessToken })
    expect(asBuyer.json().data).toMatchObject({ total: 100, refunded: 40, platformFee: 6, sellerEarning: 54 })
    expect(order.timeline.at(-1)).toEqual({ action: 'resolve_split', status: 'completed', by: 'staff', reason: NOTE, at: ctx.clock.now().toISOString() })
    // 400.00 left after paying 100.00, plus the 40.00 refund; the seller gets 60.00 minus 6.00.
    await expectBalances(placed, revenueBefore, { buyer: 440, seller: 54, fee: 6 })
    expect((await moneyOf(placed.orderId)).map((move) => move.type).sort()).toEqual(['order_earning', 'order_earning', 'order_payment', 'order_refund'])
    expect(await auditOf(placed.orderId)).toEqual([
      expect.objectContaining({
        action: 'dispute.resolve_split',
        actorId: arbiter.user.id,
        targetType: 'order',
        reason: NOTE,
        before: { status: 'disputed', total: 100, escrow: 100 },
        after: { status: 'completed', refundAmount: 40, sellerAmount: 54, fee: 6 },
        requestId: resolved.headers['x-request-id'],
      }),
    ])
    const events = await eventsOf(placed.orderId)
    expect(events.filter((event) => event.event === 'order.resolved').map((event) => event.data)).toEqual([
      { orderId: placed.orderId, serviceId: placed.serviceId, buyerId: placed.buyer.user.id, sellerId: placed.seller.user.id, status: 'completed', refundAmount: 40, sellerAmount: 54, fee: 6, by: arbiter.user.id },
    ])
    expect(events.at(-2)).toMatchObject({ event: 'order.status_changed', data: { from: 'disputed', to: 'completed', by: arbiter.user.id } })
    expect(events.map((event) => event.event)).not.toContain('order.completed')

    const root = await createSuperuser(ctx)
    const check = await request(ctx.app, { method: 'GET', url: '/admin/ledger/check', token: root.accessToken })
    expect(check.json().data).toMatchObject({ ok: true, problems: [] })

    await drainOutbox()
    const buyerMail = ctx.mailer.sent.find((mail) => mail.to === placed.buyer.user.email && mail.subject.startsWith('Dispute resolved'))
    const sellerMail = ctx.mailer.sent.find((mail) => mail.to === placed.seller.user.email && mail.subject.startsWith('Dispute resolved'))
    expect(buyerMail?.text).toContain('40.00 was refunded to your wallet')
    expect(sellerMail?.text).toContain('54.00 was paid to your wallet')
    expect(sellerMail?.text).toContain(NOTE)
  })

  it('rounds the fee on the rest half-up to the cent', async () => {
    const placed = await orderIn(ctx, 'disputed')
    const revenueBefore = await revenue()
    expect((await resolve(placed.orderId, { refundAmount: 33.35, note: NOTE })).statusCode).toBe(200)
    // 66.65 to the seller side: a fee of 6.665 rounds to 6.67.
    await expectBalances(placed, revenueBefore, { buyer: 433.35, seller: 59.98, fee: 6.67 })
  })

  it('with a refund of 0 pays the seller as a completion would', async () => {
    const placed = await orderIn(ctx, 'disputed')
    const revenueBefore = await revenue()
    expect((await resolve(placed.orderId, { refundAmount: 0, note: NOTE })).json().data).toMatchObject({ status: 'completed', refunded: 0, platformFee: 10, sellerEarning: 90 })
    await expectBalances(placed, revenueBefore, { buyer: 400, seller: 90, fee: 10 })
  })

  it('with the whole escrow refunded cancels the order and takes no fee', async () => {
    const placed = await orderIn(ctx, 'disputed')
    const revenueBefore = await revenue()
    const resolved = await resolve(placed.orderId, { refundAmount: 100, note: NOTE })
    expect(resolved.json().data).toMatchObject({ status: 'cancelled', cancelledAt: ctx.clock.now().toISOString(), completedAt: null, refunded: 100, platformFee: 0, sellerEarning: 0 })
    await expectBalances(placed, revenueBefore, { buyer: 500, seller: 0, fee: 0 })
    expect((await moneyOf(placed.orderId)).map((move) => move.type).sort()).toEqual(['order_payment', 'order_refund'])
    expect((await eventsOf(placed.orderId)).find((event) => event.event === 'order.resolved')?.data).toMatchObject({ status: 'cancelled', refundAmount: 100, sellerAmount: 0, fee: 0 })
  })

  it('lists resolve_split among the allowed actions of staff with resolve_disputes, and the all-or-nothing resolutions still work', async () => {
    const placed = await orderIn(ctx, 'disputed')
    const seen = (await request(ctx.app, { method: 'GET', url: `/orders/${placed.orderId}`, token: arbiter.accessToken })).json().data
    expect(seen.allowedActions).toEqual([
      { action: 'resolve_completed', status: 'completed', reasonRequired: false },
      { action: 'resolve_cancelled', status: 'cancelled', reasonRequired: false },
      { action: 'resolve_split', status: 'completed', reasonRequired: false },
      { action: 'resolve_split', status: 'cancelled', reasonRequired: false },
    ])
    const revenueBefore = await revenue()
    const completed = await moveOrder(ctx, arbiter.accessToken, placed.orderId, 'completed', 'The delivery matches the brief')
    expect((completed.timeline as unknown[]).at(-1)).toMatchObject({ action: 'resolve_completed' })
    await expectBalances(placed, revenueBefore, { buyer: 400, seller: 90, fee: 10 })

    // Both parties learn of an all-or-nothing resolution by e-mail too, with staff's reason.
    await drainOutbox()
    const mailTo = (email: string) => ctx.mailer.sent.filter((mail) => mail.to === email && mail.subject.startsWith('Dispute resolved'))
    expect(mailTo(placed.buyer.user.email).map((mail) => mail.text)).toEqual([expect.stringContaining('resolved: the order is completed and its escrow paid to the seller')])
    expect(mailTo(placed.seller.user.email).map((mail) => mail.text)).toEqual([expect.stringMatching(/90\.00 was paid to your wallet.*The delivery matches the brief/s)])
  })

  it('e-mails both parties of an all-or-nothing cancellation, without a decision paragraph when staff gave no reason', async () => {
    const placed = await orderIn(ctx, 'disputed')
    await moveOrder(ctx, arbiter.accessToken, placed.orderId, 'cancelled')
    await drainOutbox()
    const [buyerMail] = ctx.mailer.sent.filter((mail) => mail.to === placed.buyer.user.email && mail.subject.startsWith('Dispute resolved'))
    expect(buyerMail?.text).toContain('100.00 was refunded to your wallet')
    expect(buyerMail?.text).not.toContain('The decision')
    const [sellerMail] = ctx.mailer.sent.filter((mail) => mail.to === placed.seller.user.email && mail.subject.startsWith('Dispute resolved'))
    expect(sellerMail?.text).toContain('resolved: the whole escrow went back to the buyer')
  })

  describe('refusals: nothing moves', () => {
    let placed: PlacedOrder
    beforeAll(async () => {
      placed = await orderIn(ctx, 'disputed')
    })
    afterEach(async () => {
      const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId))
      expect(row!.status).toBe('disputed')
      expect((await moneyOf(placed.orderId)).map((move) => move.type)).toEqual(['order_payment'])
      expect(await auditOf(placed.orderId)).toEqual([])
    })

    it('401 without a token', async () => {
      expectError(await resolve(placed.orderId, { refundAmount: 10, note: NOTE }, null), 401, 'UNAUTHENTICATED')
    })

    it('403 for staff without resolve_disputes and for the parties', async () => {
      expectError(await resolve(placed.orderId, { refundAmount: 10, note: NOTE }, viewer.accessToken), 403, 'FORBIDDEN')
      expectError(await resolve(placed.orderId, { refundAmount: 100, note: NOTE }, placed.buyer.accessToken), 403, 'FORBIDDEN')
    })

    it('404 for an unknown order', async () => {
      expectError(await resolve('0196a000-0000-7000-8000-000000000000', { refundAmount: 10, note: NOTE }), 404, 'NOT_FOUND')
    })

    it('400 on refundAmount: negative, three decimals, missing, or more than the escrow', async () => {
      expectError(await resolve(placed.orderId, { refundAmount: -1, note: NOTE }), 400, 'VALIDATION_ERROR', ['refundAmount'])
      expectError(await resolve(placed.orderId, { refundAmount: 10.005, note: NOTE }), 400, 'VALIDATION_ERROR', ['refundAmount'])
      expectError(await resolve(placed.orderId, { note: NOTE }), 400, 'VALIDATION_ERROR', ['refundAmount'])
      const over = await resolve(placed.orderId, { refundAmount: 100.01, note: NOTE })
      expectError(over, 400, 'VALIDATION_ERROR', ['refundAmount'])
      expect(over.json().error.details[0].message).toContain('100.00')
    })

    it('400 on note: missing, blank or over 1000 characters', async () => {
      expectError(await resolve(placed.orderId, { refundAmount: 10 }), 400, 'VALIDATION_ERROR', ['note'])
      expectError(await resolve(placed.orderId, { refundAmount: 10, note: '   ' }), 400, 'VALIDATION_ERROR', ['note'])
      expectError(await resolve(placed.orderId, { refundAmount: 10, note: 'x'.repeat(1001) }), 400, 'VALIDATION_ERROR', ['note'])
    })
  })

  it('422 INVALID_TRANSITION on an order that is not disputed', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    expectError(await resolve(placed.orderId, { refundAmount: 10, note: NOTE }), 422, 'INVALID_TRANSITION')
    expect((await moneyOf(placed.orderId)).map((move) => move.type)).toEqual(['order_payment'])
  })

  it('two resolutions of one order at once: exactly one wins and the money moves once', async () => {
    for (let round = 0; round < 3; round++) {
      const placed = await orderIn(ctx, 'disputed')
      const revenueBefore = await revenue()
      const answers = await Promise.all([resolve(placed.orderId, { refundAmount: 40, note: NOTE }), resolve(placed.orderId, { refundAmount: 100, note: NOTE })])
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 422])
      const winner = answers.find((answer) => answer.statusCode === 200)!.json().data as { status: string }
      if (winner.status === 'completed') await expectBalances(placed, revenueBefore, { buyer: 440, seller: 54, fee: 6 })
      else await expectBalances(placed, revenueBefore, { buyer: 500, seller: 0, fee: 0 })
      expect(await auditOf(placed.orderId)).toHaveLength(1)
      expect((await eventsOf(placed.orderId)).filter((event) => event.event === 'order.resolved')).toHaveLength(1)
    }
  })

  // PostgreSQL only: a second connection holds the order's row until both resolutions wait on it.
  it.runIf(inject('pgTemplate') !== '')('two resolutions queued on the order’s lock: the first wins, the second is 422, the money moves once', async () => {
    const placed = await orderIn(ctx, 'disputed')
    const revenueBefore = await revenue()
    let release: () => void = () => undefined
    let locked: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    const held = new Promise<void>((resolve) => (locked = resolve))
    const holding = ctx.database.db.transaction(async (tx) => {
      await tx.select().from(orders).where(eq(orders.id, placed.orderId)).for('update')
      locked()
      await released
    })
    await held
    const answers = Promise.all([resolve(placed.orderId, { refundAmount: 40, note: NOTE }), resolve(placed.orderId, { refundAmount: 40, note: NOTE })])
    await untilAQueryWaitsForALock(ctx.database.db)
    release()
    await holding
    const [first, second] = await answers
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 422])
    expectError([first, second].find((answer) => answer.statusCode === 422)!, 422, 'INVALID_TRANSITION')
    await expectBalances(placed, revenueBefore, { buyer: 440, seller: 54, fee: 6 })
    expect((await moneyOf(placed.orderId)).map((move) => move.type).sort()).toEqual(['order_earning', 'order_earning', 'order_payment', 'order_refund'])
    expect(await auditOf(placed.orderId)).toHaveLength(1)
  })
})
