import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createActiveService, createFundedBuyer, orderIn, renewSessions } from '../../../test/factories/orders.ts'
import { makeOffer, offerBody, offerMove, offerParties, type OfferJson } from '../../../test/factories/offers.ts'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { services } from '../catalogue/services.table.ts'
import { conversations, messages } from '../messaging/messaging.table.ts'
import { orders } from '../orders/orders.table.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { offers } from './offers.table.ts'

const wallet = async (ctx: TestContext, token: string) => (await request(ctx.app, { method: 'GET', url: '/wallet', token })).json().data as { balance: number; escrow: number }

/** The data of every event of this name written to the outbox, oldest first. */
async function eventsNamed(ctx: TestContext, name: string): Promise<Record<string, unknown>[]> {
  const rows = await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event'))
  return rows.map((row) => row.payload as { event: string; data: Record<string, unknown> }).filter((payload) => payload.event === name).map((payload) => payload.data)
}

describe('custom offers', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  describe('POST /messages/conversations/{conversationId}/offers', () => {
    it('makes a pending offer that the conversation shows as a message carrying it, with its event', async () => {
      const parties = await offerParties(ctx)
      const before = ctx.clock.now().getTime()
      const offer = await makeOffer(ctx, parties, { expiresInDays: 3 })
      expect(offer).toEqual({
        id: expect.any(String),
        conversationId: parties.conversationId,
        senderId: parties.seller.user.id,
        recipientId: parties.buyer.user.id,
        serviceId: null,
        title: 'Logo and three labels',
        description: 'A hand-drawn mark and labels for three blends.',
        price: 120,
        deliveryDays: 4,
        revisions: 2,
        status: 'pending',
        declineReason: null,
        expiresAt: new Date(before + 3 * DAY).toISOString(),
        orderId: null,
        respondedAt: null,
        createdAt: new Date(before).toISOString(),
      })
      const page = await request(ctx.app, { method: 'GET', url: `/messages/conversations/${parties.conversationId}`, token: parties.buyer.accessToken })
      expect(page.statusCode, page.body).toBe(200)
      const [newest, older] = page.json().data.items as { offer: OfferJson | null; senderId: string; content: string }[]
      expect(newest).toMatchObject({ senderId: parties.seller.user.id, offer: { id: offer.id, status: 'pending', price: 120 } })
      expect(newest!.content).toContain('Logo and three labels')
      expect(older!.offer).toBeNull()
      // The conversation list's last message carries it too.
      const list = await request(ctx.app, { method: 'GET', url: '/messages/conversations', token: parties.buyer.accessToken })
      expect(list.json().data.items[0].lastMessage.offer).toMatchObject({ id: offer.id })
      expect(await eventsNamed(ctx, 'offer.created')).toContainEqual({
        offerId: offer.id,
        conversationId: parties.conversationId,
        senderId: parties.seller.user.id,
        recipientId: parties.buyer.user.id,
        serviceId: null,
        price: 120,
        deliveryDays: 4,
        expiresAt: offer.expiresAt,
      })
    })

    it('defaults to 7 days, and e-mails the recipient through the worker', async () => {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties)
      expect(new Date(offer.expiresAt).getTime()).toBe(ctx.clock.now().getTime() + 7 * DAY)
      ctx.mailer.sent = []
      await ctx.app.container.worker.drain()
      const mail = ctx.mailer.sent.find((message) => message.to === parties.buyer.user.email && message.subject.includes('custom offer'))
      expect(mail?.text).toContain('Logo and three labels')
      expect(mail?.text).toContain(`/messages/${parties.conversationId}`)
    })

    it('names a service of the sender only when it is theirs (404 otherwise) and active (422 otherwise)', async () => {
      const parties = await offerParties(ctx)
      const own = await createActiveService(ctx, parties.seller)
      const offer = await makeOffer(ctx, parties, { serviceId: own.serviceId })
      expect(offer.serviceId).toBe(own.serviceId)
      const other = await createActiveService(ctx)
      const url = `/messages/conversations/${parties.conversationId}/offers`
      expectError(await request(ctx.app, { method: 'POST', url, token: parties.seller.accessToken, payload: offerBody({ serviceId: other.serviceId }) }), 404, 'NOT_FOUND')
      await ctx.database.db.update(services).set({ status: 'paused' }).where(eq(services.id, own.serviceId))
      expectError(await request(ctx.app, { method: 'POST', url, token: parties.seller.accessToken, payload: offerBody({ serviceId: own.serviceId }) }), 422, 'OFFER_SERVICE_UNAVAILABLE')
    })

    it('refuses each out-of-range field by name, a stranger with 404, an order conversation with 422, and no token with 401', async () => {
      const parties = await offerParties(ctx)
      const url = `/messages/conversations/${parties.conversationId}/offers`
      const post = (payload: Record<string, unknown>, token = parties.seller.accessToken) => request(ctx.app, { method: 'POST', url, token, payload })
      expectError(await post(offerBody({ title: 'Logo' })), 400, 'VALIDATION_ERROR', ['title'])
      expectError(await post(offerBody({ title: 'x'.repeat(101) })), 400, 'VALIDATION_ERROR', ['title'])
      expectError(await post(offerBody({ description: 'x'.repeat(2001) })), 400, 'VALIDATION_ERROR', ['description'])
      expectError(await post(offerBody({ price: 4.99 })), 400, 'VALIDATION_ERROR', ['price'])
      expectError(await post(offerBody({ price: 50_000.01 })), 400, 'VALIDATION_ERROR', ['price'])
      expectError(await post(offerBody({ price: 10.005 })), 400, 'VALIDATION_ERROR', ['price'])
      expectError(await post(offerBody({ deliveryDays: 0 })), 400, 'VALIDATION_ERROR', ['deliveryDays'])
      expectError(await post(offerBody({ deliveryDays: 91 })), 400, 'VALIDATION_ERROR', ['deliveryDays'])
      expectError(await post(offerBody({ revisions: 11 })), 400, 'VALIDATION_ERROR', ['revisions'])
      expectError(await post(offerBody({ expiresInDays: 31 })), 400, 'VALIDATION_ERROR', ['expiresInDays'])
      expectError(await post(offerBody({ serviceId: 'nope' })), 400, 'VALIDATION_ERROR', ['serviceId'])
      expectError(await post(offerBody({ extra: true })), 400, 'VALIDATION_ERROR')
      const stranger = await createUser(ctx)
      expectError(await post(offerBody(), stranger.accessToken), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'POST', url, payload: offerBody() }), 401, 'UNAUTHENTICATED')
      const placed = await orderIn(ctx, 'pending')
      const [orderConversation] = await ctx.database.db.select().from(conversations).where(eq(conversations.orderId, placed.orderId))
      expectError(
        await request(ctx.app, { method: 'POST', url: `/messages/conversations/${orderConversation!.id}/offers`, token: placed.seller.accessToken, payload: offerBody() }),
        422,
        'NOT_DIRECT_CONVERSATION',
      )
      expect(await ctx.database.db.select().from(offers).where(eq(offers.conversationId, parties.conversationId))).toEqual([])
    })
  })

  describe('POST /offers/{offerId}/accept', () => {
    it('places an in-progress order for the offer’s terms with its price in escrow, and the offer names the order', async () => {
      const parties = await offerParties(ctx)
      const service = await createActiveService(ctx, parties.seller)
      const offer = await makeOffer(ctx, parties, { serviceId: service.serviceId, price: 150.5, deliveryDays: 6, revisions: 1 })
      const answer = await offerMove(ctx, parties.buyer, offer.id, 'accept')
      expect(answer.statusCode, answer.body).toBe(201)
      const order = answer.json().data
      expect(order).toMatchObject({
        offerId: offer.id,
        serviceId: service.serviceId,
        serviceTitle: 'Logo and three labels',
        packageId: null,
        packageName: 'Custom offer',
        status: 'in_progress',
        requirements: 'A hand-drawn mark and labels for three blends.',
        price: 150.5,
        total: 150.5,
        platformFee: 15.05,
        sellerEarning: 135.45,
        deliveryDays: 6,
        revisionsLeft: 1,
        dueAt: new Date(ctx.clock.now().getTime() + 6 * DAY).toISOString(),
        tip: null,
        buyer: { id: parties.buyer.user.id },
        seller: { id: parties.seller.user.id },
      })
      expect(order.conversationId).toEqual(expect.any(String))
      expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 349.5, escrow: 150.5 })
      const [row] = await ctx.database.db.select().from(offers).where(eq(offers.id, offer.id))
      expect(row).toMatchObject({ status: 'accepted', orderId: order.id })
      expect(await ctx.database.db.select().from(conversations).where(eq(conversations.orderId, order.id))).toHaveLength(1)
      expect((await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, order.id))).map((move) => move.type)).toEqual(['order_payment'])
      expect(await eventsNamed(ctx, 'offer.accepted')).toContainEqual({ offerId: offer.id, conversationId: parties.conversationId, senderId: parties.seller.user.id, recipientId: parties.buyer.user.id, orderId: order.id, price: 150.5 })
      expect(await eventsNamed(ctx, 'order.created')).toContainEqual({ orderId: order.id, serviceId: service.serviceId, buyerId: parties.buyer.user.id, sellerId: parties.seller.user.id, total: 150.5 })
      // The seller reads the order as theirs, with the offer named; the message now shows the offer accepted.
      const asSeller = await request(ctx.app, { method: 'GET', url: `/orders/${order.id}`, token: parties.seller.accessToken })
      expect(asSeller.json().data).toMatchObject({ offerId: offer.id, allowedActions: expect.arrayContaining([expect.objectContaining({ action: 'deliver' })]) })
      const page = await request(ctx.app, { method: 'GET', url: `/messages/conversations/${parties.conversationId}`, token: parties.seller.accessToken })
      expect(page.json().data.items[0].offer).toMatchObject({ id: offer.id, status: 'accepted', orderId: order.id })
      // A second accept finds it accepted.
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'accept'), 422, 'INVALID_TRANSITION')
    })

    it('without a service, the order has none and counts for the seller; the seller can deliver and the buyer complete it', async () => {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties)
      const accepted = await offerMove(ctx, parties.buyer, offer.id, 'accept')
      expect(accepted.statusCode, accepted.body).toBe(201)
      expect(accepted.json().data).toMatchObject({ serviceId: null, packageId: null })
      const orderId = accepted.json().data.id as string
      const { deliver, moveOrder } = await import('../../../test/factories/orders.ts')
      expect((await deliver(ctx, parties.seller.accessToken, orderId)).statusCode).toBe(200)
      await moveOrder(ctx, parties.buyer.accessToken, orderId, 'completed')
      expect(await wallet(ctx, parties.seller.accessToken)).toMatchObject({ balance: 108 })
      const review = await request(ctx.app, { method: 'POST', url: '/reviews', token: parties.buyer.accessToken, payload: { orderId, rating: 5, comment: 'Lovely labels' } })
      expect(review.statusCode, review.body).toBe(201)
      expect(review.json().data.serviceId).toBeNull()
    })

    it('refuses without the money: 422 INSUFFICIENT_FUNDS, nothing moves, and the offer stays pending', async () => {
      const parties = await offerParties(ctx, 100)
      const offer = await makeOffer(ctx, parties, { price: 100.01 })
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'accept'), 422, 'INSUFFICIENT_FUNDS')
      expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 100, escrow: 0 })
      const [row] = await ctx.database.db.select().from(offers).where(eq(offers.id, offer.id))
      expect(row).toMatchObject({ status: 'pending', orderId: null })
      expect(await ctx.database.db.select().from(orders).where(eq(orders.buyerId, parties.buyer.user.id))).toEqual([])
    })

    it('is 422 OFFER_SERVICE_UNAVAILABLE when the named service was paused since', async () => {
      const parties = await offerParties(ctx)
      const service = await createActiveService(ctx, parties.seller)
      const offer = await makeOffer(ctx, parties, { serviceId: service.serviceId })
      await ctx.database.db.update(services).set({ status: 'paused' }).where(eq(services.id, service.serviceId))
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'accept'), 422, 'OFFER_SERVICE_UNAVAILABLE')
      expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
    })

    it('is for the recipient only: the sender gets 422, a stranger 404, no token 401, a body field 400', async () => {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties)
      expectError(await offerMove(ctx, parties.seller, offer.id, 'accept'), 422, 'INVALID_TRANSITION')
      expectError(await offerMove(ctx, await createFundedBuyer(ctx), offer.id, 'accept'), 404, 'NOT_FOUND')
      expectError(await offerMove(ctx, parties.buyer, '01963fdd-1142-7ab5-aaca-f0fc0c8cfd54', 'accept'), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'POST', url: `/offers/${offer.id}/accept`, payload: {} }), 401, 'UNAUTHENTICATED')
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'accept', { price: 1 }), 400, 'VALIDATION_ERROR')
      expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
    })

    it('replays the answer to a retry with the same Idempotency-Key', async () => {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties)
      const headers = { 'idempotency-key': `accept-${offer.id}` }
      const first = await offerMove(ctx, parties.buyer, offer.id, 'accept', {}, headers)
      const again = await offerMove(ctx, parties.buyer, offer.id, 'accept', {}, headers)
      expect(first.statusCode, first.body).toBe(201)
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json().data.id).toBe(first.json().data.id)
      expect(await ctx.database.db.select().from(orders).where(eq(orders.offerId, offer.id))).toHaveLength(1)
    })
  })

  describe('decline and withdraw', () => {
    it('the recipient declines with a reason the seller is e-mailed; nothing else can happen to it then', async () => {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties)
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'decline', { reason: '' }), 400, 'VALIDATION_ERROR', ['reason'])
      expectError(await offerMove(ctx, parties.seller, offer.id, 'decline'), 422, 'INVALID_TRANSITION')
      const declined = await offerMove(ctx, parties.buyer, offer.id, 'decline', { reason: 'Too expensive for us right now' })
      expect(declined.statusCode, declined.body).toBe(200)
      expect(declined.json().data).toMatchObject({ id: offer.id, status: 'declined', declineReason: 'Too expensive for us right now', respondedAt: ctx.clock.now().toISOString() })
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'accept'), 422, 'INVALID_TRANSITION')
      expectError(await offerMove(ctx, parties.seller, offer.id, 'withdraw'), 422, 'INVALID_TRANSITION')
      expect(await eventsNamed(ctx, 'offer.declined')).toContainEqual({ offerId: offer.id, conversationId: parties.conversationId, senderId: parties.seller.user.id, recipientId: parties.buyer.user.id, reason: 'Too expensive for us right now' })
      ctx.mailer.sent = []
      await ctx.app.container.worker.drain()
      expect(ctx.mailer.sent.find((mail) => mail.to === parties.seller.user.email)?.text).toContain('Too expensive for us right now')
    })

    it('the sender withdraws; the recipient cannot, a stranger gets 404, and it cannot be accepted after', async () => {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties)
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'withdraw'), 422, 'INVALID_TRANSITION')
      expectError(await offerMove(ctx, await createUser(ctx), offer.id, 'withdraw'), 404, 'NOT_FOUND')
      expectError(await offerMove(ctx, parties.seller, offer.id, 'withdraw', { reason: 'x' }), 400, 'VALIDATION_ERROR')
      const withdrawn = await offerMove(ctx, parties.seller, offer.id, 'withdraw')
      expect(withdrawn.statusCode, withdrawn.body).toBe(200)
      expect(withdrawn.json().data.status).toBe('withdrawn')
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'accept'), 422, 'INVALID_TRANSITION')
      expect(await eventsNamed(ctx, 'offer.withdrawn')).toContainEqual({ offerId: offer.id, conversationId: parties.conversationId, senderId: parties.seller.user.id, recipientId: parties.buyer.user.id })
      expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
    })
  })

  describe('expiry', () => {
    it('after expiresAt a move is 422 OFFER_EXPIRED, the offer reads and stays expired, and the event is written once', async () => {
      const parties = await offerParties(ctx)
      const offer = await makeOffer(ctx, parties, { expiresInDays: 1 })
      ctx.clock.advance(DAY)
      await renewSessions(ctx, parties.buyer, parties.seller)
      const listed = await request(ctx.app, { method: 'GET', url: '/offers?role=received', token: parties.buyer.accessToken })
      expect(listed.json().data.items[0]).toMatchObject({ id: offer.id, status: 'expired', respondedAt: offer.expiresAt })
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'accept'), 422, 'OFFER_EXPIRED')
      expectError(await offerMove(ctx, parties.buyer, offer.id, 'decline'), 422, 'OFFER_EXPIRED')
      expectError(await offerMove(ctx, parties.seller, offer.id, 'withdraw'), 422, 'OFFER_EXPIRED')
      const [row] = await ctx.database.db.select().from(offers).where(eq(offers.id, offer.id))
      expect(row).toMatchObject({ status: 'expired', orderId: null })
      expect((await eventsNamed(ctx, 'offer.expired')).filter((data) => data.offerId === offer.id)).toHaveLength(1)
      expect(await wallet(ctx, parties.buyer.accessToken)).toMatchObject({ balance: 500, escrow: 0 })
    })

    it('the worker marks overdue offers expired once, leaving the rest, and e-mails their senders', async () => {
      const parties = await offerParties(ctx)
      const soon = await makeOffer(ctx, parties, { expiresInDays: 1 })
      const later = await makeOffer(ctx, parties, { expiresInDays: 5 })
      ctx.clock.advance(2 * DAY)
      const { offers: api } = ctx.app.container
      const counts = await Promise.all([api.expireDueOffers(), api.expireDueOffers()])
      expect(counts[0] + counts[1]).toBeGreaterThanOrEqual(1)
      expect(await api.expireDueOffers()).toBe(0)
      const rows = await ctx.database.db.select().from(offers).where(eq(offers.conversationId, parties.conversationId))
      expect(Object.fromEntries(rows.map((row) => [row.id, row.status]))).toMatchObject({ [soon.id]: 'expired', [later.id]: 'pending' })
      expect((await eventsNamed(ctx, 'offer.expired')).filter((data) => data.offerId === soon.id)).toHaveLength(1)
      ctx.mailer.sent = []
      await ctx.app.container.worker.drain()
      expect(ctx.mailer.sent.some((mail) => mail.to === parties.seller.user.email && mail.subject === 'Your custom offer expired')).toBe(true)
    })
  })

  describe('GET /offers', () => {
    it('lists the caller’s offers newest first, by role and status, paged; 400 for an unknown role; 401 without a token', async () => {
      const parties = await offerParties(ctx)
      const first = await makeOffer(ctx, parties, { title: 'First offer here' })
      ctx.clock.advance(1000)
      const second = await makeOffer(ctx, parties, { title: 'Second offer here' })
      await offerMove(ctx, parties.seller, first.id, 'withdraw')
      const list = async (query: string, token = parties.buyer.accessToken) => {
        const response = await request(ctx.app, { method: 'GET', url: `/offers${query}`, token })
        expect(response.statusCode, response.body).toBe(200)
        return response.json().data as { items: OfferJson[]; pagination: Record<string, unknown> }
      }
      expect((await list('?role=received')).items.map((item) => item.id)).toEqual([second.id, first.id])
      expect((await list('?role=sent')).items).toEqual([])
      expect((await list('?role=sent', parties.seller.accessToken)).items.map((item) => item.id)).toEqual([second.id, first.id])
      expect((await list('')).items.map((item) => item.id)).toEqual([second.id, first.id])
      expect((await list('?status=pending')).items.map((item) => item.id)).toEqual([second.id])
      expect((await list('?status=withdrawn&role=received')).items.map((item) => item.id)).toEqual([first.id])
      const paged = await list('?limit=1&page=2')
      expect(paged.items.map((item) => item.id)).toEqual([first.id])
      expect(paged.pagination).toEqual({ page: 2, limit: 1, total: 2, pages: 2, hasNext: false, hasPrev: true })
      expect((await list('', (await createUser(ctx)).accessToken)).items).toEqual([])
      expectError(await request(ctx.app, { method: 'GET', url: '/offers?role=mine', token: parties.buyer.accessToken }), 400, 'VALIDATION_ERROR', ['role'])
      expectError(await request(ctx.app, { method: 'GET', url: '/offers?status=open', token: parties.buyer.accessToken }), 400, 'VALIDATION_ERROR', ['status'])
      expectError(await request(ctx.app, { method: 'GET', url: '/offers' }), 401, 'UNAUTHENTICATED')
    })
  })

  it('keeps the message that presents an offer in the database with its offer id', async () => {
    const parties = await offerParties(ctx)
    const offer = await makeOffer(ctx, parties)
    expect(await ctx.database.db.select().from(messages).where(eq(messages.offerId, offer.id))).toHaveLength(1)
  })
})
