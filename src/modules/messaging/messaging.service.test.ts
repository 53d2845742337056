import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendMessage } from '../../../test/factories/messages.ts'
import { createUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { newId } from '../../lib/ids.ts'
import { conversationParticipants, conversations } from './messaging.table.ts'

describe('openOrderConversation (called by order placement)', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  const open = (order: { orderId: string; buyerId: string; sellerId: string }) => ctx.database.db.transaction((tx) => ctx.app.container.messaging.openOrderConversation(tx, order))

  it("opens the order's conversation between buyer and seller in the caller's transaction, once", async () => {
    const buyer = await createUser(ctx)
    const seller = await createUser(ctx)
    const stranger = await createUser(ctx)
    const orderId = newId()
    const first = await open({ orderId, buyerId: buyer.user.id, sellerId: seller.user.id })
    const again = await open({ orderId, buyerId: buyer.user.id, sellerId: seller.user.id })
    expect(again.id).toBe(first.id)
    expect(await ctx.database.db.select().from(conversations).where(eq(conversations.orderId, orderId))).toHaveLength(1)
    const participants = await ctx.database.db.select().from(conversationParticipants).where(eq(conversationParticipants.conversationId, first.id))
    expect(participants.map((row) => row.userId).sort()).toEqual([buyer.user.id, seller.user.id].sort())
    expect(await ctx.app.container.messaging.conversationOfOrder(ctx.database.db, orderId)).toEqual({ id: first.id })

    // Listed for both with its order id before any message; separate from their direct conversation.
    const listed = (await request(ctx.app, { method: 'GET', url: '/messages/conversations', token: seller.accessToken })).json().data.items
    expect(listed).toEqual([expect.objectContaining({ id: first.id, orderId, lastMessage: null, unreadCount: 0, otherParticipant: expect.objectContaining({ id: buyer.user.id }) })])
    const inOrder = await sendMessage(ctx, buyer, { conversationId: first.id }, 'About my order')
    const direct = await sendMessage(ctx, buyer, { recipientId: seller.user.id }, 'Unrelated')
    expect(inOrder.conversationId).toBe(first.id)
    expect(direct.conversationId).not.toBe(first.id)
    expectError(await request(ctx.app, { method: 'GET', url: `/messages/conversations/${first.id}`, token: stranger.accessToken }), 404, 'NOT_FOUND')
  })

  it('rolls back with the transaction that called it', async () => {
    const buyer = await createUser(ctx)
    const seller = await createUser(ctx)
    const orderId = newId()
    await expect(
      ctx.database.db.transaction(async (tx) => {
        await ctx.app.container.messaging.openOrderConversation(tx, { orderId, buyerId: buyer.user.id, sellerId: seller.user.id })
        throw new Error('order placement failed')
      }),
    ).rejects.toThrow('order placement failed')
    expect(await ctx.app.container.messaging.conversationOfOrder(ctx.database.db, orderId)).toBeUndefined()
  })

  it('refuses an order whose buyer is its seller (422 INVALID_RECIPIENT)', async () => {
    const user = await createUser(ctx)
    await expect(open({ orderId: newId(), buyerId: user.user.id, sellerId: user.user.id })).rejects.toMatchObject({ code: 'INVALID_RECIPIENT' })
  })
})
