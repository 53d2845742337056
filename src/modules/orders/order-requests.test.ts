import { asc, eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { answerRequest, openRequest, sendRequest } from '../../../test/factories/requests.ts'
import { deliver, moveOrder, orderIn, type PlacedOrder } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { createTestApp, expectError, request, type ErrorJson, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { ledgerTransactions } from '../wallet/ledger.table.ts'
import { orderRequests } from './order-requests.table.ts'
import { orders } from './orders.table.ts'

const REASON = 'The client asked us to pause the whole rebrand for now.'

/** The resolution center through HTTP: opening, answering, withdrawing requests, their records, and what other moves do to them. */
describe('order requests', () => {
  let ctx: TestContext
  let viewer: TestUser
  let stranger: TestUser
  beforeAll(async () => {
    ctx = await createTestApp({ env: { ORDER_REQUEST_DAYS: '2' } })
    viewer = await createUser(ctx, { permissions: ['view_orders'] })
    stranger = await createUser(ctx)
  })
  afterAll(() => ctx.close())
  afterEach(() => expectBooksBalance(ctx))

  const getOrder = async (token: string, orderId: string) => (await request(ctx.app, { method: 'GET', url: `/orders/${orderId}`, token })).json().data
  const wallet = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number }
  const rowsOf = (orderId: string) => ctx.database.db.select().from(orderRequests).where(eq(orderRequests.orderId, orderId))
  const moneyOf = async (orderId: string) => (await ctx.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.orderId, orderId))).map((move) => move.type).sort()
  // Ids are UUIDv7, so by id is the order they were written in.
  const jobsOf = async () => (await ctx.database.db.select().from(outboxJobs).orderBy(asc(outboxJobs.id))).map((row) => ({ topic: row.topic, payload: row.payload as Record<string, unknown> & { data?: { orderId?: string } } }))
  const eventsOf = async (orderId: string) =>
    (await jobsOf()).filter((job) => job.topic === 'event' && job.payload.data?.orderId === orderId).map((job) => job.payload as { event: string; data: Record<string, unknown> })
  const mailJobsOf = async (requestId: string) =>
    (await jobsOf()).filter((job) => job.topic === 'mail.order_request' && job.payload.requestId === requestId).map((job) => `${job.payload.news as string} ${job.payload.recipientId as string}`).sort()
  const actionsOf = (order: { allowedActions: { action: string }[] }) => order.allowedActions.map((move) => move.action).sort()
  const ids = (placed: PlacedOrder) => ({ orderId: placed.orderId, serviceId: placed.serviceId, buyerId: placed.buyer.user.id, sellerId: placed.seller.user.id })

  describe('POST /orders/{orderId}/requests', () => {
    it('opens a cancellation by the buyer: 201 with the request, its event and an e-mail job to the seller', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const response = await sendRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation', reason: `  ${REASON}  ` })
      expect(response.statusCode, response.body).toBe(201)
      const created = response.json().data
      const now = ctx.clock.now()
      expect(created).toEqual({
        id: expect.any(String),
        orderId: placed.orderId,
        type: 'cancellation',
        status: 'open',
        requestedBy: 'buyer',
        reason: REASON,
        days: null,
        amount: null,
        expiresAt: new Date(now.getTime() + 2 * DAY).toISOString(),
        respondedAt: null,
        createdAt: now.toISOString(),
      })
      expect(await rowsOf(placed.orderId)).toEqual([expect.objectContaining({ id: created.id, status: 'open', requesterId: placed.buyer.user.id, reason: REASON, days: null, amountCents: null })])
      expect((await eventsOf(placed.orderId)).filter((event) => event.event.startsWith('order.request_'))).toEqual([
        { event: 'order.request_opened', timestamp: now.toISOString(), data: { ...ids(placed), requestId: created.id, type: 'cancellation', requestedBy: 'buyer' } },
      ])
      expect(await mailJobsOf(created.id)).toEqual([`opened ${placed.seller.user.id}`])
      // The order reads the request, to both parties and to staff.
      for (const token of [placed.buyer.accessToken, placed.seller.accessToken, viewer.accessToken]) expect((await getOrder(token, placed.orderId)).requests).toEqual([created])
    })

    it('opens an extension with its days and a partial refund with its amount, both by the seller, carrying them in the event', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const extension = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', days: 3 })
      expect(extension).toMatchObject({ type: 'extension', requestedBy: 'seller', days: 3, amount: null })
      await answerRequest(ctx, placed.buyer.accessToken, placed.orderId, extension.id, 'decline')
      const refund = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'partial_refund', amount: 12.5 })
      expect(refund).toMatchObject({ type: 'partial_refund', requestedBy: 'seller', days: null, amount: 12.5 })
      const opened = (await eventsOf(placed.orderId)).filter((event) => event.event === 'order.request_opened').map((event) => event.data)
      expect(opened).toEqual([
        { ...ids(placed), requestId: extension.id, type: 'extension', requestedBy: 'seller', days: 3 },
        { ...ids(placed), requestId: refund.id, type: 'partial_refund', requestedBy: 'seller', amount: 12.5 },
      ])
      expect(await mailJobsOf(refund.id)).toEqual([`opened ${placed.buyer.user.id}`])
    })

    it('while a request is open, lists accept and decline to the other party, withdraw to its author, and no new request', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const before = await getOrder(placed.seller.accessToken, placed.orderId)
      expect(actionsOf(before)).toEqual(['deliver', 'dispute', 'offer_partial_refund', 'request_cancellation', 'request_extension'])
      expect(actionsOf(await getOrder(placed.buyer.accessToken, placed.orderId))).toEqual(['dispute', 'request_cancellation'])
      await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', days: 2 })
      const seller = await getOrder(placed.seller.accessToken, placed.orderId)
      const buyer = await getOrder(placed.buyer.accessToken, placed.orderId)
      expect(actionsOf(seller)).toEqual(['deliver', 'dispute', 'withdraw_request'])
      expect(actionsOf(buyer)).toEqual(['accept_request', 'decline_request', 'dispute'])
      expect(buyer.allowedActions.filter((move: { action: string }) => move.action.endsWith('_request'))).toEqual([
        { action: 'accept_request', status: 'in_progress', reasonRequired: false },
        { action: 'decline_request', status: 'in_progress', reasonRequired: false },
      ])
      expect(actionsOf(await getOrder(viewer.accessToken, placed.orderId))).toEqual([])
    })

    it('names the status accepting leads to: a cancellation request offers accept_request to cancelled', async () => {
      const placed = await orderIn(ctx, 'delivered')
      await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'cancellation' })
      const buyer = await getOrder(placed.buyer.accessToken, placed.orderId)
      expect(buyer.allowedActions).toEqual(expect.arrayContaining([{ action: 'accept_request', status: 'cancelled', reasonRequired: false }]))
    })

    describe('refusals: nothing is written', () => {
      let placed: PlacedOrder
      beforeAll(async () => {
        placed = await orderIn(ctx, 'in_progress')
      })
      afterEach(async () => {
        expect(await rowsOf(placed.orderId)).toEqual([])
      })
      const ask = (payload: object, token = placed.seller.accessToken) => sendRequest(ctx, token, placed.orderId, payload)

      it('400 on reason: missing, under 10 characters without the spaces around, over 1000', async () => {
        expectError(await ask({ type: 'cancellation' }), 400, 'VALIDATION_ERROR', ['reason'])
        expectError(await ask({ type: 'cancellation', reason: 'Too short' }), 400, 'VALIDATION_ERROR', ['reason'])
        expectError(await ask({ type: 'cancellation', reason: '    short!    ' }), 400, 'VALIDATION_ERROR', ['reason'])
        expectError(await ask({ type: 'cancellation', reason: 'x'.repeat(1001) }), 400, 'VALIDATION_ERROR', ['reason'])
      })

      it('400 on type when it is not one of the three, and on an unknown field', async () => {
        expectError(await ask({ type: 'discount', reason: REASON }), 400, 'VALIDATION_ERROR', ['type'])
        expectError(await ask({ type: 'cancellation', reason: REASON, note: 'x' }), 400, 'VALIDATION_ERROR')
      })

      it('400 on days: missing on an extension, outside 1 to 30, not whole, or on another kind', async () => {
        expectError(await ask({ type: 'extension', reason: REASON }), 400, 'VALIDATION_ERROR', ['days'])
        for (const days of [0, 31, 1.5, -2]) expectError(await ask({ type: 'extension', reason: REASON, days }), 400, 'VALIDATION_ERROR', ['days'])
        expectError(await ask({ type: 'cancellation', reason: REASON, days: 3 }), 400, 'VALIDATION_ERROR', ['days'])
        expectError(await ask({ type: 'partial_refund', reason: REASON, amount: 5, days: 3 }), 400, 'VALIDATION_ERROR', ['days'])
      })

      it('400 on amount: missing on a partial refund, not above 0, a third decimal, on another kind, or not less than the escrow (named)', async () => {
        expectError(await ask({ type: 'partial_refund', reason: REASON }), 400, 'VALIDATION_ERROR', ['amount'])
        for (const amount of [0, -5, 10.005]) expectError(await ask({ type: 'partial_refund', reason: REASON, amount }), 400, 'VALIDATION_ERROR', ['amount'])
        expectError(await ask({ type: 'extension', reason: REASON, days: 2, amount: 5 }), 400, 'VALIDATION_ERROR', ['amount'])
        expectError(await ask({ type: 'cancellation', reason: REASON, amount: 5 }), 400, 'VALIDATION_ERROR', ['amount'])
        for (const amount of [100, 100.01, 5000]) {
          const over = await ask({ type: 'partial_refund', reason: REASON, amount })
          expectError(over, 400, 'VALIDATION_ERROR', ['amount'])
          expect(over.json<ErrorJson>().error.details[0]!.message).toContain('100.00')
        }
      })

      it('422 INVALID_TRANSITION for the wrong party, listing the request moves the caller may make', async () => {
        const extension = await ask({ type: 'extension', reason: REASON, days: 2 }, placed.buyer.accessToken)
        expectError(extension, 422, 'INVALID_TRANSITION')
        expect(extension.json<ErrorJson>().error.details).toEqual([{ field: 'action', message: 'request_cancellation' }])
        expectError(await ask({ type: 'partial_refund', reason: REASON, amount: 5 }, placed.buyer.accessToken), 422, 'INVALID_TRANSITION')
        expectError(await ask({ type: 'cancellation', reason: REASON }, viewer.accessToken), 422, 'INVALID_TRANSITION')
      })

      it('404 for a stranger and for an unknown order; 401 without a token', async () => {
        expectError(await ask({ type: 'cancellation', reason: REASON }, stranger.accessToken), 404, 'NOT_FOUND')
        expectError(await sendRequest(ctx, placed.buyer.accessToken, '0196a000-0000-7000-8000-000000000000', { type: 'cancellation', reason: REASON }), 404, 'NOT_FOUND')
        expectError(await request(ctx.app, { method: 'POST', url: `/orders/${placed.orderId}/requests`, payload: { type: 'cancellation', reason: REASON } }), 401, 'UNAUTHENTICATED')
      })
    })

    it('422 INVALID_TRANSITION for a status the kind is not made in', async () => {
      const pending = await orderIn(ctx, 'pending')
      expectError(await sendRequest(ctx, pending.seller.accessToken, pending.orderId, { type: 'extension', reason: REASON, days: 2 }), 422, 'INVALID_TRANSITION')
      expectError(await sendRequest(ctx, pending.seller.accessToken, pending.orderId, { type: 'partial_refund', reason: REASON, amount: 5 }), 422, 'INVALID_TRANSITION')
      const delivered = await orderIn(ctx, 'delivered')
      expectError(await sendRequest(ctx, delivered.seller.accessToken, delivered.orderId, { type: 'extension', reason: REASON, days: 2 }), 422, 'INVALID_TRANSITION')
      for (const status of ['completed', 'cancelled', 'disputed'] as const) {
        const order = await orderIn(ctx, status)
        for (const token of [order.buyer.accessToken, order.seller.accessToken]) expectError(await sendRequest(ctx, token, order.orderId, { type: 'cancellation', reason: REASON }), 422, 'INVALID_TRANSITION')
        expect(await rowsOf(order.orderId)).toEqual([])
      }
    })

    it('422 REQUEST_OPEN for a second request while one is open, by either party', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const first = await openRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation' })
      expectError(await sendRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', reason: REASON, days: 2 }), 422, 'REQUEST_OPEN')
      expectError(await sendRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation', reason: REASON }), 422, 'REQUEST_OPEN')
      expect((await rowsOf(placed.orderId)).map((row) => row.id)).toEqual([first.id])
      await answerRequest(ctx, placed.buyer.accessToken, placed.orderId, first.id, 'withdraw')
      const second = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', days: 2 })
      // Newest first.
      expect((await getOrder(placed.buyer.accessToken, placed.orderId)).requests.map((one: { id: string }) => one.id)).toEqual([second.id, first.id])
    })
  })

  describe('accept, decline, withdraw', () => {
    it('a cancellation accepted by the seller cancels the order and refunds the buyer, with its records', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const asked = await openRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation', reason: REASON })
      ctx.clock.advance(60_000)
      const accepted = await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'accept')
      expect(accepted.statusCode, accepted.body).toBe(200)
      const order = accepted.json().data
      const now = ctx.clock.now().toISOString()
      expect(order).toMatchObject({ status: 'cancelled', cancelledAt: now, statusReason: REASON, allowedActions: [], refunded: 0 })
      expect(order.requests).toEqual([{ ...asked, status: 'accepted', respondedAt: now }])
      expect(order.timeline.at(-1)).toEqual({ action: 'accept_request', status: 'cancelled', by: 'seller', reason: REASON, at: now })
      expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
      expect(await moneyOf(placed.orderId)).toEqual(['order_payment', 'order_refund'])
      const events = (await eventsOf(placed.orderId)).map((event) => event.event)
      expect(events.slice(-3)).toEqual(['order.status_changed', 'order.cancelled', 'order.request_accepted'])
      expect(events).not.toContain('order.request_expired')
      expect(await mailJobsOf(asked.id)).toEqual([`accepted ${placed.buyer.user.id}`, `accepted ${placed.seller.user.id}`, `opened ${placed.seller.user.id}`].sort())
      await ctx.app.container.worker.drain()
      const mails = ctx.mailer.sent.filter((mail) => mail.subject.includes(placed.order.serviceTitle as string) || mail.text.includes(placed.orderId))
      const toBuyer = mails.filter((mail) => mail.to === placed.buyer.user.email).map((mail) => mail.subject)
      const toSeller = mails.filter((mail) => mail.to === placed.seller.user.email).map((mail) => mail.subject)
      expect(toSeller).toEqual(expect.arrayContaining([expect.stringContaining('The buyer asks to cancel the order'), expect.stringContaining('Accepted: the cancellation request')]))
      expect(toBuyer).toEqual(expect.arrayContaining([expect.stringContaining('Accepted: the cancellation request')]))
      expect(toBuyer).not.toEqual(expect.arrayContaining([expect.stringContaining('asks to cancel')]))
    })

    it('a cancellation asked by the seller of a pending order, accepted by the buyer', async () => {
      const placed = await orderIn(ctx, 'pending')
      const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'cancellation' })
      const accepted = await answerRequest(ctx, placed.buyer.accessToken, placed.orderId, asked.id, 'accept')
      expect(accepted.json().data).toMatchObject({ status: 'cancelled', timeline: [expect.objectContaining({ action: 'accept_request', by: 'buyer' })] })
      expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
    })

    it('an extension accepted moves dueAt by its days; nothing moves in the wallet', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const dueAt = (await getOrder(placed.buyer.accessToken, placed.orderId)).dueAt as string
      const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', days: 5 })
      const accepted = await answerRequest(ctx, placed.buyer.accessToken, placed.orderId, asked.id, 'accept')
      expect(accepted.statusCode, accepted.body).toBe(200)
      expect(accepted.json().data).toMatchObject({ status: 'in_progress', dueAt: new Date(new Date(dueAt).getTime() + 5 * DAY).toISOString(), requests: [{ id: asked.id, status: 'accepted' }] })
      const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId))
      expect(row!.dueAt!.toISOString()).toBe(new Date(new Date(dueAt).getTime() + 5 * DAY).toISOString())
      expect(await moneyOf(placed.orderId)).toEqual(['order_payment'])
      expect((await eventsOf(placed.orderId)).at(-1)).toEqual({ event: 'order.request_accepted', timestamp: ctx.clock.now().toISOString(), data: { ...ids(placed), requestId: asked.id, type: 'extension', requestedBy: 'seller', days: 5 } })
    })

    it('a decline closes the request and changes nothing else; both parties are told', async () => {
      const placed = await orderIn(ctx, 'delivered')
      const asked = await openRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation' })
      const declined = await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'decline')
      expect(declined.statusCode, declined.body).toBe(200)
      expect(declined.json().data).toMatchObject({ status: 'delivered', requests: [{ id: asked.id, status: 'declined', respondedAt: ctx.clock.now().toISOString() }] })
      expect(actionsOf(declined.json().data)).toEqual(['dispute', 'offer_partial_refund', 'request_cancellation'])
      expect(await wallet(placed.buyer)).toMatchObject({ balance: 400, escrow: 100 })
      expect((await eventsOf(placed.orderId)).at(-1)).toMatchObject({ event: 'order.request_declined', data: { requestId: asked.id, type: 'cancellation', requestedBy: 'buyer' } })
      expect(await mailJobsOf(asked.id)).toEqual([`declined ${placed.buyer.user.id}`, `declined ${placed.seller.user.id}`, `opened ${placed.seller.user.id}`].sort())
    })

    it('sends no e-mail of a kind of news its recipient switched off, and still sends the other party theirs', async () => {
      const placed = await orderIn(ctx, 'delivered')
      const off = await request(ctx.app, { method: 'PUT', url: '/users/me/notification-settings', token: placed.buyer.accessToken, payload: { email: { 'order.request_declined': false } } })
      expect(off.statusCode, off.body).toBe(200)
      const asked = await openRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation' })
      expect((await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'decline')).statusCode).toBe(200)
      const before = ctx.mailer.sent.length
      await ctx.app.container.worker.drain()
      const subjects = (user: TestUser) => ctx.mailer.sent.slice(before).filter((mail) => mail.to === user.user.email).map((mail) => mail.subject)
      expect(subjects(placed.buyer)).toEqual([])
      expect(subjects(placed.seller).filter((subject) => subject.startsWith('Declined:'))).toHaveLength(1)
    })

    it('its author withdraws it; the other party may not, and the author may not answer it', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'partial_refund', amount: 20 })
      expectError(await answerRequest(ctx, placed.buyer.accessToken, placed.orderId, asked.id, 'withdraw'), 422, 'INVALID_TRANSITION')
      const own = await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'accept')
      expectError(own, 422, 'INVALID_TRANSITION')
      expect(own.json<ErrorJson>().error.details).toEqual([{ field: 'action', message: 'withdraw_request' }])
      expectError(await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'decline'), 422, 'INVALID_TRANSITION')
      expectError(await answerRequest(ctx, viewer.accessToken, placed.orderId, asked.id, 'accept'), 422, 'INVALID_TRANSITION')
      const withdrawn = await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'withdraw')
      expect(withdrawn.statusCode, withdrawn.body).toBe(200)
      expect(withdrawn.json().data.requests).toEqual([{ ...asked, status: 'withdrawn', respondedAt: ctx.clock.now().toISOString() }])
      expect(await wallet(placed.buyer)).toMatchObject({ balance: 400, escrow: 100 })
      expect((await eventsOf(placed.orderId)).at(-1)).toMatchObject({ event: 'order.request_withdrawn', data: { requestId: asked.id, amount: 20 } })
    })

    it('422 INVALID_TRANSITION on a request no longer open; 404 for a stranger, an unknown request or one of another order', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const other = await orderIn(ctx, 'in_progress')
      const asked = await openRequest(ctx, placed.buyer.accessToken, placed.orderId, { type: 'cancellation' })
      const elsewhere = await openRequest(ctx, other.buyer.accessToken, other.orderId, { type: 'cancellation' })
      expectError(await answerRequest(ctx, stranger.accessToken, placed.orderId, asked.id, 'accept'), 404, 'NOT_FOUND')
      expectError(await answerRequest(ctx, placed.seller.accessToken, placed.orderId, '0196a000-0000-7000-8000-000000000000', 'accept'), 404, 'NOT_FOUND')
      expectError(await answerRequest(ctx, placed.seller.accessToken, placed.orderId, elsewhere.id, 'accept'), 404, 'NOT_FOUND')
      expectError(await answerRequest(ctx, placed.seller.accessToken, placed.orderId, 'not-a-uuid', 'accept'), 404, 'NOT_FOUND')
      expect((await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, 'decline')).statusCode).toBe(200)
      for (const verb of ['accept', 'decline'] as const) expectError(await answerRequest(ctx, placed.seller.accessToken, placed.orderId, asked.id, verb), 422, 'INVALID_TRANSITION')
      expectError(await answerRequest(ctx, placed.buyer.accessToken, placed.orderId, asked.id, 'withdraw'), 422, 'INVALID_TRANSITION')
      expect((await rowsOf(other.orderId)).map((row) => row.status)).toEqual(['open'])
      expect((await rowsOf(placed.orderId)).map((row) => row.status)).toEqual(['declined'])
      expectError(await request(ctx.app, { method: 'POST', url: `/orders/${placed.orderId}/requests/${asked.id}/accept`, token: placed.seller.accessToken, payload: { note: 'x' } }), 400, 'VALIDATION_ERROR')
    })
  })

  describe('any other move ends an open request as expired', () => {
    const expired = async (placed: PlacedOrder, requestId: string) => {
      expect((await rowsOf(placed.orderId)).find((row) => row.id === requestId)).toMatchObject({ status: 'expired', respondedAt: ctx.clock.now() })
      const events = (await eventsOf(placed.orderId)).map((event) => event.event)
      expect(events.filter((event) => event === 'order.request_expired')).toHaveLength(1)
      expect(await mailJobsOf(requestId)).toEqual(expect.arrayContaining([`expired ${placed.buyer.user.id}`, `expired ${placed.seller.user.id}`]))
    }

    it('a delivery ends an open extension', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', days: 2 })
      const delivered = await deliver(ctx, placed.seller.accessToken, placed.orderId)
      expect(delivered.statusCode, delivered.body).toBe(200)
      expect(delivered.json().data.requests[0]).toMatchObject({ id: asked.id, status: 'expired' })
      await expired(placed, asked.id)
    })

    it('a completion ends an open partial refund, and nothing is refunded', async () => {
      const placed = await orderIn(ctx, 'delivered')
      const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'partial_refund', amount: 30 })
      await moveOrder(ctx, placed.buyer.accessToken, placed.orderId, 'completed')
      await expired(placed, asked.id)
      expect(await wallet(placed.seller)).toMatchObject({ balance: 90 })
      expect(await moneyOf(placed.orderId)).toEqual(['order_earning', 'order_earning', 'order_payment'])
    })

    it('a dispute, a revision request and a cancellation end it too', async () => {
      const disputed = await orderIn(ctx, 'in_progress')
      const first = await openRequest(ctx, disputed.buyer.accessToken, disputed.orderId, { type: 'cancellation' })
      await moveOrder(ctx, disputed.seller.accessToken, disputed.orderId, 'disputed', 'We cannot agree on the scope')
      await expired(disputed, first.id)
      const revised = await orderIn(ctx, 'delivered')
      const second = await openRequest(ctx, revised.seller.accessToken, revised.orderId, { type: 'partial_refund', amount: 5 })
      await moveOrder(ctx, revised.buyer.accessToken, revised.orderId, 'in_progress', 'Please make the blue darker')
      await expired(revised, second.id)
      const cancelled = await orderIn(ctx, 'pending')
      const third = await openRequest(ctx, cancelled.seller.accessToken, cancelled.orderId, { type: 'cancellation' })
      await moveOrder(ctx, cancelled.buyer.accessToken, cancelled.orderId, 'cancelled')
      await expired(cancelled, third.id)
    })

    it('a staff cancel ends it, refunding once', async () => {
      const manager = await createUser(ctx, { permissions: ['view_orders', 'manage_orders'] })
      const placed = await orderIn(ctx, 'in_progress')
      const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', days: 4 })
      const cancelled = await request(ctx.app, { method: 'POST', url: `/admin/orders/${placed.orderId}/cancel`, token: manager.accessToken, payload: {} })
      expect(cancelled.statusCode, cancelled.body).toBe(200)
      await expired(placed, asked.id)
      expect(await wallet(placed.buyer)).toMatchObject({ balance: 500, escrow: 0 })
    })
  })

  it('lists carry each order’s requests and the request moves of the moment', async () => {
    const placed = await orderIn(ctx, 'in_progress')
    const asked = await openRequest(ctx, placed.seller.accessToken, placed.orderId, { type: 'extension', days: 1 })
    const purchases = await request(ctx.app, { method: 'GET', url: '/orders/purchases', token: placed.buyer.accessToken })
    const listed = (purchases.json().data.items as { id: string; requests: { id: string }[]; allowedActions: { action: string }[] }[]).find((order) => order.id === placed.orderId)!
    expect(listed.requests.map((one) => one.id)).toEqual([asked.id])
    expect(actionsOf(listed)).toEqual(['accept_request', 'decline_request', 'dispute'])
    const staffList = await request(ctx.app, { method: 'GET', url: `/admin/orders?buyerId=${placed.buyer.user.id}`, token: viewer.accessToken })
    expect(staffList.json().data.items[0].requests).toEqual([asked])
  })
})
