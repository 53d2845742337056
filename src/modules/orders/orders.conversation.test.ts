import { readFileSync } from 'node:fs'
import { eq, sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { moveOrder, orderIn, placeOrder, renewSessions } from '../../../test/factories/orders.ts'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { listen, openSocket, type TestSocket } from '../../../test/setup/sockets.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { conversationParticipants, conversations, messages } from '../messaging/messaging.table.ts'
import { orders } from './orders.table.ts'

/** Every order answer carries the order's conversation; a party's reason on a move is kept and told. */
describe('orders and their conversation', () => {
  let ctx: TestContext
  let url: string
  const sockets: TestSocket[] = []
  beforeAll(async () => {
    ctx = await createTestApp({ env: { WS_HEARTBEAT_SECONDS: '3600' } })
    url = await listen(ctx.app)
  })
  afterAll(async () => {
    for (const socket of sockets) socket.close()
    await ctx.close()
  })
  afterEach(() => expectBooksBalance(ctx))

  const conversationOf = async (orderId: string) => (await ctx.database.db.select().from(conversations).where(eq(conversations.orderId, orderId)))[0]!
  const messagesOf = (conversationId: string) => ctx.database.db.select().from(messages).where(eq(messages.conversationId, conversationId)).orderBy(messages.seq)
  const getOrder = async (orderId: string, token: string) => (await request(ctx.app, { method: 'GET', url: `/orders/${orderId}`, token })).json().data

  describe('conversationId', () => {
    it('is the conversation opened at placement, in the placement answer, the order, every list and the staff list', async () => {
      const placed = await placeOrder(ctx)
      const conversation = await conversationOf(placed.orderId)
      expect(placed.order.conversationId).toBe(conversation.id)
      expect((await getOrder(placed.orderId, placed.seller.accessToken)).conversationId).toBe(conversation.id)
      const lists = [
        ['/orders/purchases', placed.buyer],
        ['/orders/sales', placed.seller],
        [`/admin/orders?buyerId=${placed.buyer.user.id}`, await createUser(ctx, { permissions: ['view_orders'] })],
      ] as const
      for (const [path, user] of lists) {
        const items = (await request(ctx.app, { method: 'GET', url: path, token: user.accessToken })).json().data.items as { id: string; conversationId: string }[]
        expect(items.find((item) => item.id === placed.orderId)?.conversationId, path).toBe(conversation.id)
      }
    })

    it('opens for both parties, and is 404 to anyone else', async () => {
      const placed = await placeOrder(ctx)
      const conversationId = placed.order.conversationId as string
      for (const party of [placed.buyer, placed.seller]) {
        const opened = await request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}`, token: party.accessToken })
        expect(opened.statusCode, opened.body).toBe(200)
        expect(opened.json().data).toMatchObject({ items: [], pagination: { total: 0 } })
      }
      const listed = (await request(ctx.app, { method: 'GET', url: '/messages/conversations', token: placed.buyer.accessToken })).json().data.items as { id: string; orderId: string | null }[]
      expect(listed.find((item) => item.id === conversationId)?.orderId).toBe(placed.orderId)
      expectError(await request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}`, token: (await createUser(ctx)).accessToken }), 404, 'NOT_FOUND')
    })

    it('is given to orders placed before orders opened conversations, by the migration that added it', async () => {
      const placed = await placeOrder(ctx)
      await ctx.database.db.delete(conversations).where(eq(conversations.orderId, placed.orderId))
      const migration = readFileSync(new URL('../../../migrations/0021_order_timeline.sql', import.meta.url), 'utf8')
      for (const statement of migration.split('--> statement-breakpoint').slice(1)) await ctx.database.db.execute(sql.raw(statement))
      const opened = await conversationOf(placed.orderId)
      expect(opened.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(opened.createdAt).toEqual(new Date(placed.order.createdAt as string))
      const participants = await ctx.database.db.select().from(conversationParticipants).where(eq(conversationParticipants.conversationId, opened.id))
      expect(participants.map((participant) => participant.userId).sort()).toEqual([placed.buyer.user.id, placed.seller.user.id].sort())
      expect((await getOrder(placed.orderId, placed.buyer.accessToken)).conversationId).toBe(opened.id)
    })
  })

  describe('the reason of a move', () => {
    it('a revision request’s note: kept as statusReason and on the timeline, and posted to the chat as the buyer’s message, pushed to the seller’s socket', async () => {
      const placed = await orderIn(ctx, 'delivered')
      const { buyer, seller, orderId } = placed
      const sellerSocket = await openSocket(url, { header: seller.accessToken })
      sockets.push(sellerSocket)
      const note = 'The mark is right, but the blue should be darker, like our bags.'

      const revised = await moveOrder(ctx, buyer.accessToken, orderId, 'in_progress', note)
      expect(revised).toMatchObject({ status: 'in_progress', statusReason: note, revisionsLeft: 1 })
      const at = ctx.clock.now().toISOString()
      expect(revised.timeline).toEqual([
        { action: 'accept', status: 'in_progress', by: 'seller', reason: null, at },
        { action: 'deliver', status: 'delivered', by: 'seller', reason: null, at },
        { action: 'request_revision', status: 'in_progress', by: 'buyer', reason: note, at },
      ])
      expect(await getOrder(orderId, seller.accessToken)).toMatchObject({ statusReason: note, timeline: revised.timeline })

      const [message] = await messagesOf(revised.conversationId as string)
      expect(message).toMatchObject({ senderId: buyer.user.id, content: note, seq: 1 })
      const frame = await sellerSocket.message(message!.id)
      expect(frame.data).toMatchObject({ conversationId: revised.conversationId, senderId: buyer.user.id, content: note })
      const page = (await request(ctx.app, { method: 'GET', url: `/messages/conversations/${revised.conversationId as string}`, token: seller.accessToken })).json().data
      expect(page.items.map((item: { content: string }) => item.content)).toEqual([note])
      // The seller had a socket open: no e-mail about the note.
      const mails = (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'mail.new_message'))).filter((job) => (job.payload as { messageId: string }).messageId === message!.id)
      expect(mails).toEqual([])
    })

    it('e-mails the other party about the note when they have no socket open', async () => {
      const placed = await orderIn(ctx, 'in_progress')
      await moveOrder(ctx, placed.seller.accessToken, placed.orderId, 'disputed', 'The buyer has not sent the texts for two weeks.')
      const [message] = await messagesOf((await conversationOf(placed.orderId)).id)
      expect(message).toMatchObject({ senderId: placed.seller.user.id, content: 'The buyer has not sent the texts for two weeks.' })
      const mails = (await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'mail.new_message'))).filter((job) => (job.payload as { messageId: string }).messageId === message!.id)
      expect(mails.map((job) => job.payload)).toEqual([{ messageId: message!.id, recipientId: placed.buyer.user.id }])
    })

    it('a move without a reason clears statusReason and posts nothing', async () => {
      const placed = await orderIn(ctx, 'disputed')
      const resolver = await createUser(ctx, { permissions: ['resolve_disputes'] })
      const before = await messagesOf(placed.order.conversationId as string)
      const resolved = await moveOrder(ctx, resolver.accessToken, placed.orderId, 'completed')
      expect(resolved).toMatchObject({ status: 'completed', statusReason: null })
      expect((resolved.timeline as unknown[]).at(-1)).toEqual({ action: 'resolve_completed', status: 'completed', by: 'staff', reason: null, at: ctx.clock.now().toISOString() })
      expect(await messagesOf(placed.order.conversationId as string)).toEqual(before)
    })

    it('staff’s reason is on the timeline and in statusReason, not in the parties’ chat', async () => {
      const placed = await placeOrder(ctx)
      const manager = await createUser(ctx, { permissions: ['manage_orders'] })
      const cancelled = await request(ctx.app, { method: 'POST', url: `/admin/orders/${placed.orderId}/cancel`, token: manager.accessToken, payload: { reason: 'The seller closed their business.' } })
      expect(cancelled.json().data).toMatchObject({
        statusReason: 'The seller closed their business.',
        timeline: [{ action: 'cancel', status: 'cancelled', by: 'staff', reason: 'The seller closed their business.', at: ctx.clock.now().toISOString() }],
      })
      expect(await messagesOf(placed.order.conversationId as string)).toEqual([])
    })

    it('a refused move with a reason keeps nothing: no message, no timeline entry', async () => {
      const placed = await placeOrder(ctx)
      expectError(
        await request(ctx.app, { method: 'PUT', url: `/orders/${placed.orderId}/status`, token: placed.buyer.accessToken, payload: { status: 'completed', reason: 'Done?' } }),
        422,
        'INVALID_TRANSITION',
      )
      expect(await messagesOf(placed.order.conversationId as string)).toEqual([])
      const [row] = await ctx.database.db.select().from(orders).where(eq(orders.id, placed.orderId))
      expect(row).toMatchObject({ status: 'pending', statusReason: null, timeline: [] })
    })

    it('the worker’s completion is on the timeline as the system’s move', async () => {
      const placed = await orderIn(ctx, 'delivered')
      ctx.clock.advance(3 * DAY + 1)
      await renewSessions(ctx, placed.buyer)
      await ctx.app.container.orders.completeDueOrders()
      const order = await getOrder(placed.orderId, placed.buyer.accessToken)
      expect(order.timeline.map((move: { action: string; by: string }) => `${move.action}:${move.by}`)).toEqual(['accept:seller', 'deliver:seller', 'complete:system'])
      expect(order.timeline.at(-1)).toMatchObject({ status: 'completed', reason: null, at: ctx.clock.now().toISOString() })
    })
  })
})
