import { Type } from '@sinclair/typebox'
import { count, eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { submitKyc } from '../../../test/factories/kyc.ts'
import { makeOffer, offerMove, offerParties } from '../../../test/factories/offers.ts'
import { deliver, moveOrder, orderIn, placeOrder, renewSessions } from '../../../test/factories/orders.ts'
import { answerRequest, openRequest } from '../../../test/factories/requests.ts'
import { publishService, createCategory } from '../../../test/factories/services.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { defineEvent, emitEvent } from '../../platform/outbox/events.ts'
import { users } from '../users/users.table.ts'
import { notifications } from './notifications.table.ts'

interface Item {
  id: string
  kind: string
  title: string
  body: string
  link: { type: string; id: string }
  readAt: string | null
  createdAt: string
}

const Uuid = Type.String({ format: 'uuid' })
const OrderIds = { orderId: Uuid, serviceId: Uuid, buyerId: Uuid, sellerId: Uuid }
/** Events other parts of the platform emit once they land: declared here as they will be, to check their rules now. */
const upcoming = {
  reviewPublished: defineEvent('review.published', 'test', Type.Object({ reviewId: Uuid, orderId: Uuid, authorId: Uuid, subjectId: Uuid })),
  reviewReplied: defineEvent('review.replied', 'test', Type.Object({ reviewId: Uuid, orderId: Uuid, authorId: Uuid, subjectId: Uuid })),
  levelChanged: defineEvent('seller.level_changed', 'test', Type.Object({ userId: Uuid, from: Type.String(), to: Type.String() })),
  orderRefunded: defineEvent('order.refunded', 'test', Type.Object({ ...OrderIds, amount: Type.Number() })),
}

describe('a notification for each person an event concerns, never for the one who acted', () => {
  let ctx: TestContext
  let stranger: TestUser
  let staff: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    stranger = await createUser(ctx)
    staff = await createUser(ctx, { permissions: ['view_orders', 'manage_orders', 'resolve_disputes', 'view_kyc', 'manage_kyc', 'view_accounts', 'approve_withdrawals', 'view_users', 'manage_users', 'view_services', 'approve_services'] })
  })
  // Tests move the clock past the tokens' lifetime.
  beforeEach(() => renewSessions(ctx, staff, stranger))
  afterEach(async () => {
    // Nothing about anyone reaches a bystander.
    await renewSessions(ctx, stranger)
    expect(await inbox(stranger)).toEqual([])
    await expectBooksBalance(ctx)
  })
  afterAll(() => ctx.close())

  const inbox = async (user: TestUser): Promise<Item[]> => {
    const response = await request(ctx.app, { method: 'GET', url: '/notifications?limit=100', token: user.accessToken })
    expect(response.statusCode, response.body).toBe(200)
    return response.json().data.items as Item[]
  }
  const seen = new Map<string, Set<string>>()
  /** The person's notifications that this test has not looked at yet (those of one step may share a time, so in no set order). */
  const fresh = async (user: TestUser): Promise<Item[]> => {
    const known = seen.get(user.user.id) ?? new Set<string>()
    seen.set(user.user.id, known)
    const items = (await inbox(user)).filter((item) => !known.has(item.id))
    for (const item of items) known.add(item.id)
    return items.sort((a, b) => a.kind.localeCompare(b.kind))
  }
  const freshKinds = async (user: TestUser) => (await fresh(user)).map((item) => item.kind)
  const outbox = () => ctx.app.container.outbox
  const emit = (build: (tx: Parameters<Parameters<typeof ctx.database.db.transaction>[0]>[0]) => Promise<unknown>) => ctx.database.db.transaction(build)

  describe('orders', () => {
    it('tells the seller of a new order, the buyer of its acceptance and each delivery, the seller of a revision request, completion, a tip and a review', async () => {
      const placed = await placeOrder(ctx)
      const { buyer, seller, orderId } = placed
      expect(await freshKinds(buyer)).toEqual([])
      const sellerNews = await fresh(seller)
      expect(sellerNews.map((item) => item.kind)).toEqual(['order.placed', 'service.approved'])
      expect(sellerNews[0]).toEqual({
        id: expect.any(String),
        kind: 'order.placed',
        title: 'New order',
        body: 'A buyer placed an order: 100.00 USD is in escrow.',
        link: { type: 'order', id: orderId },
        readAt: null,
        createdAt: ctx.clock.now().toISOString(),
      })
      expect(sellerNews[1]!.link).toEqual({ type: 'service', id: placed.serviceId })

      await moveOrder(ctx, seller.accessToken, orderId, 'in_progress')
      expect(await fresh(buyer)).toMatchObject([{ kind: 'order.accepted', body: 'The seller accepted your order and started work.', link: { type: 'order', id: orderId } }])
      expect((await deliver(ctx, seller.accessToken, orderId)).statusCode).toBe(200)
      expect(await freshKinds(buyer)).toEqual(['order.delivered'])
      await moveOrder(ctx, buyer.accessToken, orderId, 'in_progress')
      expect(await freshKinds(seller)).toEqual(['order.revision_requested'])
      expect((await deliver(ctx, seller.accessToken, orderId)).statusCode).toBe(200)
      expect(await freshKinds(buyer)).toEqual(['order.delivered'])
      await moveOrder(ctx, buyer.accessToken, orderId, 'completed')
      expect(await fresh(seller)).toMatchObject([{ kind: 'order.completed', body: 'The buyer accepted your delivery: the order is complete and your earning was credited to your wallet.' }])
      const tip = await request(ctx.app, { method: 'POST', url: `/orders/${orderId}/tip`, token: buyer.accessToken, payload: { amount: 10 } })
      expect(tip.statusCode, tip.body).toBe(200)
      expect(await fresh(seller)).toMatchObject([{ kind: 'order.tipped', body: 'The buyer tipped you 10.00 USD; 10.00 USD is in your wallet.' }])
      const review = await request(ctx.app, { method: 'POST', url: '/reviews', token: buyer.accessToken, payload: { orderId, rating: 5, comment: 'Lovely work' } })
      expect(review.statusCode, review.body).toBe(201)
      // Reviews are blind until both parties wrote theirs: nobody hears of the first one yet.
      expect(await freshKinds(seller)).toEqual([])
      const back = await request(ctx.app, { method: 'POST', url: '/reviews', token: seller.accessToken, payload: { orderId, rating: 4, comment: 'Clear brief' } })
      expect(back.statusCode, back.body).toBe(201)
      expect(await fresh(seller)).toMatchObject([{ kind: 'review.received', link: { type: 'order', id: orderId } }])
      expect(await fresh(buyer)).toMatchObject([{ kind: 'review.received', link: { type: 'order', id: orderId } }])
    })

    it('tells both parties when an order completes by itself, nobody having acted', async () => {
      const { buyer, seller } = await orderIn(ctx, 'delivered')
      await Promise.all([fresh(buyer), fresh(seller)])
      ctx.clock.advance(4 * DAY)
      expect(await ctx.app.container.orders.completeDueOrders()).toBeGreaterThanOrEqual(1)
      await renewSessions(ctx, buyer, seller)
      for (const party of [buyer, seller]) {
        expect(await fresh(party)).toMatchObject([{ kind: 'order.completed', body: 'The order completed by itself: its delivery was neither accepted nor disputed in time.' }])
      }
    })

    it('tells the other party of a cancellation, and both when staff cancel', async () => {
      const byBuyer = await placeOrder(ctx)
      await fresh(byBuyer.seller)
      await moveOrder(ctx, byBuyer.buyer.accessToken, byBuyer.orderId, 'cancelled')
      expect(await fresh(byBuyer.seller)).toMatchObject([{ kind: 'order.cancelled', body: 'The order was cancelled and its total went back to the buyer.' }])
      expect(await freshKinds(byBuyer.buyer)).toEqual([])

      const bySeller = await placeOrder(ctx)
      await fresh(bySeller.seller)
      await moveOrder(ctx, bySeller.seller.accessToken, bySeller.orderId, 'cancelled')
      expect(await freshKinds(bySeller.buyer)).toEqual(['order.cancelled'])
      expect(await freshKinds(bySeller.seller)).toEqual([])

      const byStaff = await orderIn(ctx, 'in_progress')
      await Promise.all([fresh(byStaff.buyer), fresh(byStaff.seller)])
      const cancelled = await request(ctx.app, { method: 'POST', url: `/admin/orders/${byStaff.orderId}/cancel`, token: staff.accessToken, payload: { reason: 'The seller closed their business' } })
      expect(cancelled.statusCode, cancelled.body).toBe(200)
      expect(await freshKinds(byStaff.buyer)).toEqual(['order.cancelled'])
      expect(await freshKinds(byStaff.seller)).toEqual(['order.cancelled'])
      expect(await freshKinds(staff)).toEqual([])
    })

    it('tells the other party of a dispute, and both of its resolution, whole or split', async () => {
      const whole = await orderIn(ctx, 'in_progress')
      await Promise.all([fresh(whole.buyer), fresh(whole.seller)])
      await moveOrder(ctx, whole.seller.accessToken, whole.orderId, 'disputed', 'The buyer stopped answering')
      // The reason is the seller's message in the order's conversation: the buyer, away, hears of it too.
      expect(await freshKinds(whole.buyer)).toEqual(['message.received', 'order.disputed'])
      expect(await freshKinds(whole.seller)).toEqual([])
      await moveOrder(ctx, staff.accessToken, whole.orderId, 'cancelled')
      for (const party of [whole.buyer, whole.seller]) expect(await fresh(party)).toMatchObject([{ kind: 'order.resolved', body: 'Staff decided the dispute: the order is cancelled.' }])

      const split = await orderIn(ctx, 'disputed')
      expect(await freshKinds(split.seller)).toEqual(['message.received', 'order.disputed', 'order.placed', 'service.approved'])
      await fresh(split.buyer)
      const resolved = await request(ctx.app, { method: 'POST', url: `/admin/orders/${split.orderId}/resolve`, token: staff.accessToken, payload: { refundAmount: 40, note: 'Half the work was done.' } })
      expect(resolved.statusCode, resolved.body).toBe(200)
      for (const party of [split.buyer, split.seller]) {
        expect(await fresh(party)).toMatchObject([{ kind: 'order.resolved', body: 'Staff decided the dispute: the order is completed.', link: { type: 'order', id: split.orderId } }])
      }
      expect(await freshKinds(staff)).toEqual([])
    })
  })

  describe('custom offers', () => {
    it('tells the buyer of an offer and its withdrawal, the seller of its acceptance, refusal and expiry', async () => {
      const parties = await offerParties(ctx)
      const { buyer, seller, conversationId } = parties
      await Promise.all([fresh(buyer), fresh(seller)])
      const offers = [await makeOffer(ctx, parties), await makeOffer(ctx, parties), await makeOffer(ctx, parties), await makeOffer(ctx, parties, { expiresInDays: 1 })]
      const [accepted, declined, withdrawn] = offers
      // Offers are messages too; the first one to a buyer away is also a `message.received`.
      expect((await freshKinds(buyer)).filter((kind) => kind !== 'message.received')).toEqual(['offer.received', 'offer.received', 'offer.received', 'offer.received'])
      const order = await offerMove(ctx, buyer, accepted!.id, 'accept')
      expect(order.statusCode, order.body).toBe(201)
      const orderId = order.json().data.id as string
      expect(await fresh(seller)).toMatchObject([
        { kind: 'offer.accepted', body: 'The buyer accepted your custom offer: 120.00 USD is in escrow and the order has started.', link: { type: 'order', id: orderId } },
        { kind: 'order.placed', link: { type: 'order', id: orderId } },
      ])
      expect((await offerMove(ctx, buyer, declined!.id, 'decline', { reason: 'Too dear for now' })).statusCode).toBe(200)
      expect(await fresh(seller)).toMatchObject([{ kind: 'offer.declined', body: 'The buyer declined your custom offer. Their reason: Too dear for now', link: { type: 'conversation', id: conversationId } }])
      expect((await offerMove(ctx, seller, withdrawn!.id, 'withdraw')).statusCode).toBe(200)
      expect(await fresh(buyer)).toMatchObject([{ kind: 'offer.withdrawn', link: { type: 'conversation', id: conversationId } }])
      ctx.clock.advance(DAY + 1)
      expect(await ctx.app.container.offers.expireDueOffers()).toBeGreaterThanOrEqual(1)
      await renewSessions(ctx, buyer, seller)
      expect(await fresh(seller)).toMatchObject([{ kind: 'offer.expired', body: 'Your custom offer expired without an answer.', link: { type: 'conversation', id: conversationId } }])
      expect(await freshKinds(buyer)).toEqual([])
    })
  })

  describe('money, identity, services and accounts', () => {
    async function verifiedSeller(funds: number): Promise<TestUser> {
      const seller = await createUser(ctx)
      await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, seller.user.id))
      expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: seller.accessToken, payload: { amount: funds } })).statusCode).toBe(201)
      return seller
    }
    const askPayout = async (user: TestUser, amount: number) => {
      const response = await request(ctx.app, { method: 'POST', url: '/wallet/payout', token: user.accessToken, payload: { amount, method: 'paypal', details: { email: 'seller@example.test' } } })
      expect(response.statusCode, response.body).toBe(201)
      return response.json().data.id as string
    }

    it('tells the seller when a payout is processed or rejected', async () => {
      const seller = await verifiedSeller(100)
      const processed = await askPayout(seller, 30)
      const rejected = await askPayout(seller, 20)
      expect(await fresh(seller)).toEqual([])
      expect((await request(ctx.app, { method: 'POST', url: `/admin/payouts/${processed}/approve`, token: staff.accessToken })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'POST', url: `/admin/payouts/${rejected}/reject`, token: staff.accessToken, payload: { reason: 'Wrong account' } })).statusCode).toBe(200)
      expect(await fresh(seller)).toMatchObject([
        { kind: 'payout.processed', body: 'Your payout of 30.00 USD was sent.', link: { type: 'payout', id: processed } },
        { kind: 'payout.rejected', body: 'Your payout of 20.00 USD was rejected: the amount is back in your available balance.', link: { type: 'payout', id: rejected } },
      ])
      expect(await freshKinds(staff)).toEqual([])
    })

    it('tells the person of the decision on their identity, either way', async () => {
      const approvedUser = await createUser(ctx)
      const rejectedUser = await createUser(ctx)
      const approved = await submitKyc(ctx.app, approvedUser.accessToken)
      const rejected = await submitKyc(ctx.app, rejectedUser.accessToken)
      expect((await request(ctx.app, { method: 'POST', url: `/admin/kyc/${approved}/approve`, token: staff.accessToken })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'POST', url: `/admin/kyc/${rejected}/reject`, token: staff.accessToken, payload: { reason: 'The photo is blurred' } })).statusCode).toBe(200)
      expect(await inbox(approvedUser)).toMatchObject([{ kind: 'kyc.approved', title: 'Identity verified', link: { type: 'kyc_submission', id: approved } }])
      expect(await inbox(rejectedUser)).toMatchObject([{ kind: 'kyc.rejected', title: 'Identity not verified', link: { type: 'kyc_submission', id: rejected } }])
    })

    it('tells the seller when staff approve or reject a service', async () => {
      const seller = await createUser(ctx)
      const categoryId = await createCategory(ctx)
      const [approvedId, rejectedId] = [await publishService(ctx, seller.accessToken, categoryId), await publishService(ctx, seller.accessToken, categoryId)]
      expect((await request(ctx.app, { method: 'POST', url: `/admin/services/${approvedId}/approve`, token: staff.accessToken })).statusCode).toBe(200)
      const rejected = await request(ctx.app, { method: 'POST', url: `/admin/services/${rejectedId}/reject`, token: staff.accessToken, payload: { reason: 'The gallery shows other brands' } })
      expect(rejected.statusCode, rejected.body).toBe(200)
      expect(await fresh(seller)).toMatchObject([
        { kind: 'service.approved', body: 'Your service is approved and listed in the catalogue.', link: { type: 'service', id: approvedId } },
        { kind: 'service.rejected', body: 'Your service was not approved: The gallery shows other brands. Editing it sends it for review again.', link: { type: 'service', id: rejectedId } },
      ])
    })

    it('tells a person of their suspension and of its end', async () => {
      const user = await createUser(ctx)
      expect((await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/suspend`, token: staff.accessToken, payload: { reason: 'Spam' } })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/unsuspend`, token: staff.accessToken })).statusCode).toBe(200)
      // Suspension ended the tokens issued before it.
      Object.assign(user, await ctx.app.container.auth.issueSession((await ctx.app.container.users.findAccountById(ctx.database.db, user.user.id))!))
      expect(await fresh(user)).toMatchObject([
        { kind: 'account.suspended', title: 'Account suspended', link: { type: 'user', id: user.user.id } },
        { kind: 'account.unsuspended', title: 'Suspension ended', link: { type: 'user', id: user.user.id } },
      ])
      expect(await freshKinds(staff)).toEqual([])
    })
  })

  describe('events other features emit', () => {
    it('tells the party who answers an order request of it, and its author of the answer or its end', async () => {
      const { buyer, seller, orderId } = await orderIn(ctx, 'in_progress')
      await Promise.all([fresh(buyer), fresh(seller)])
      const news = async () => ({ buyer: (await fresh(buyer)).map((item) => [item.kind, item.body]), seller: (await fresh(seller)).map((item) => [item.kind, item.body]) })
      const answer = async (token: string, requestId: string, verb: 'accept' | 'decline' | 'withdraw') => expect((await answerRequest(ctx, token, orderId, requestId, verb)).statusCode).toBe(200)

      const extension = await openRequest(ctx, seller.accessToken, orderId, { type: 'extension', days: 3 })
      expect(await news()).toEqual({ buyer: [['order.request_opened', 'The seller asked for an extension (3 days): accept or decline it.']], seller: [] })
      await answer(buyer.accessToken, extension.id, 'accept')
      expect(await news()).toEqual({ buyer: [], seller: [['order.request_accepted', 'Your request for an extension (3 days) was accepted.']] })

      const refund = await openRequest(ctx, seller.accessToken, orderId, { type: 'partial_refund', amount: 25 })
      expect(await news()).toEqual({ buyer: [['order.request_opened', 'The seller asked for a partial refund (25.00 USD): accept or decline it.']], seller: [] })
      await answer(buyer.accessToken, refund.id, 'decline')
      expect(await news()).toEqual({ buyer: [], seller: [['order.request_declined', 'Your request for a partial refund (25.00 USD) was declined.']] })

      const withdrawn = await openRequest(ctx, buyer.accessToken, orderId, { type: 'cancellation' })
      expect((await news()).seller).toEqual([['order.request_opened', 'The buyer asked for a cancellation: accept or decline it.']])
      await answer(buyer.accessToken, withdrawn.id, 'withdraw')
      expect(await news()).toEqual({ buyer: [], seller: [['order.request_withdrawn', 'The buyer withdrew their request for a cancellation.']] })

      // Another move of the order ends an open request: its author hears that it expired.
      await openRequest(ctx, seller.accessToken, orderId, { type: 'extension', days: 2 })
      await fresh(buyer)
      expect((await deliver(ctx, seller.accessToken, orderId)).statusCode).toBe(200)
      expect((await news()).seller).toEqual([['order.request_expired', 'Your request for an extension (2 days) ended unanswered: the order moved on.']])
    })

    it('tells the subject of a review made public, its author of a reply, a seller of a new level, and both parties of a staff refund', async () => {
      const { buyer, seller, orderId, serviceId } = await orderIn(ctx, 'completed')
      await Promise.all([fresh(buyer), fresh(seller)])
      const review = { reviewId: newId(), orderId, authorId: buyer.user.id, subjectId: seller.user.id }
      await emit(async (tx) => {
        const now = ctx.clock.now()
        await emitEvent(outbox(), tx, upcoming.reviewPublished, review, now)
        await emitEvent(outbox(), tx, upcoming.reviewReplied, review, now)
        await emitEvent(outbox(), tx, upcoming.levelChanged, { userId: seller.user.id, from: 'new', to: 'level_one' }, now)
        await emitEvent(outbox(), tx, upcoming.orderRefunded, { orderId, serviceId, buyerId: buyer.user.id, sellerId: seller.user.id, amount: 12.5 }, now)
      })
      expect(await fresh(buyer)).toMatchObject([
        { kind: 'order.refunded', body: 'Staff refunded 12.50 USD of the order to the buyer.', link: { type: 'order', id: orderId } },
        { kind: 'review.replied', body: 'The person you reviewed replied to your review.', link: { type: 'order', id: orderId } },
      ])
      expect(await fresh(seller)).toMatchObject([
        { kind: 'order.refunded', link: { type: 'order', id: orderId } },
        { kind: 'review.received', body: 'You received a review of an order.', link: { type: 'order', id: orderId } },
        { kind: 'seller.level_changed', body: 'Your seller level changed from new to level one.', link: { type: 'user', id: seller.user.id } },
      ])
    })
  })

  describe('the transaction of the event', () => {
    const countFor = async (userId: string) => (await ctx.database.db.select({ total: count() }).from(notifications).where(eq(notifications.userId, userId)))[0]!.total

    it('leaves no notification when the change rolls back', async () => {
      const seller = await createUser(ctx)
      const failed = emit(async (tx) => {
        await emitEvent(outbox(), tx, upcoming.levelChanged, { userId: seller.user.id, from: 'new', to: 'level_one' }, ctx.clock.now())
        expect(await tx.select({ total: count() }).from(notifications).where(eq(notifications.userId, seller.user.id))).toEqual([{ total: 1 }])
        throw new Error('the change failed')
      })
      await expect(failed).rejects.toThrow('the change failed')
      expect(await countFor(seller.user.id)).toBe(0)
    })

    it('writes nothing for a recipient who has no account, and the change still commits', async () => {
      const nobody = newId()
      await emit((tx) => emitEvent(outbox(), tx, upcoming.levelChanged, { userId: nobody, from: 'new', to: 'level_one' }, ctx.clock.now()))
      expect(await countFor(nobody)).toBe(0)
    })

    it('notifies the seller of an order placed by the one-statement write', async () => {
      const { seller, orderId } = await placeOrder(ctx)
      const rows = await ctx.database.db.select().from(notifications).where(eq(notifications.userId, seller.user.id))
      expect(rows.filter((row) => row.kind === 'order.placed').map((row) => row.linkId)).toEqual([orderId])
    })

    it('gives notifications UUIDv7 ids that carry the time of their event, like every id of the API', async () => {
      const { seller } = await placeOrder(ctx)
      const [row] = await ctx.database.db.select().from(notifications).where(eq(notifications.userId, seller.user.id))
      expect(row!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(parseInt(row!.id.replaceAll('-', '').slice(0, 12), 16)).toBe(row!.createdAt.getTime())
    })
  })
})
