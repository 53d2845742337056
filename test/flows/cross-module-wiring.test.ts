import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendMessage } from '../factories/messages.ts'
import { placeOrder } from '../factories/orders.ts'
import { createUser, type TestUser } from '../factories/users.ts'
import { expectBooksBalance } from '../setup/ledger.ts'
import { listen, openSocket, type TestSocket } from '../setup/sockets.ts'
import { createTestApp, expectError, request, type TestContext } from '../setup/test-app.ts'

/** What one module does because of another: the order's conversation, and lock-outs that reach open sockets. */
describe('across modules', () => {
  let ctx: TestContext
  let url: string
  let manager: TestUser
  const sockets: TestSocket[] = []
  beforeAll(async () => {
    ctx = await createTestApp()
    url = await listen(ctx.app)
    manager = await createUser(ctx, { permissions: ['view_users', 'manage_users'] })
  })
  afterAll(async () => {
    for (const socket of sockets) socket.close()
    await ctx.close()
  })
  const open = async (token: string) => {
    const socket = await openSocket(url, { header: token })
    sockets.push(socket)
    return socket
  }

  it('opens the order’s conversation with the order, for its buyer and seller only', async () => {
    const placed = await placeOrder(ctx)
    const conversationsOf = async (token: string) => (await request(ctx.app, { method: 'GET', url: '/messages/conversations', token })).json().data.items as { id: string; orderId: string | null; otherParticipant: { id: string } }[]
    const buyerSide = (await conversationsOf(placed.buyer.accessToken)).find((conversation) => conversation.orderId === placed.orderId)
    const sellerSide = (await conversationsOf(placed.seller.accessToken)).find((conversation) => conversation.orderId === placed.orderId)
    expect(buyerSide?.otherParticipant.id).toBe(placed.seller.user.id)
    expect(sellerSide?.otherParticipant.id).toBe(placed.buyer.user.id)
    const stranger = await createUser(ctx)
    expect((await conversationsOf(stranger.accessToken)).some((conversation) => conversation.orderId === placed.orderId)).toBe(false)
    const conversationId = buyerSide!.id
    expectError(await request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}`, token: stranger.accessToken }), 404, 'NOT_FOUND')

    // The parties write in it; their direct conversation is another one.
    const inOrder = await sendMessage(ctx, placed.buyer, { conversationId }, 'About my order')
    const direct = await sendMessage(ctx, placed.buyer, { recipientId: placed.seller.user.id }, 'Unrelated')
    expect(inOrder.conversationId).toBe(conversationId)
    expect(direct.conversationId).not.toBe(conversationId)
    await expectBooksBalance(ctx)
  })

  it('closes a user’s open sockets with 4401 when staff suspend the account, and leaves others open', async () => {
    const user = await createUser(ctx)
    const bystander = await createUser(ctx)
    const socket = await open(user.accessToken)
    const other = await open(bystander.accessToken)
    const suspended = await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/suspend`, token: manager.accessToken, payload: { reason: 'Spam' } })
    expect(suspended.statusCode, suspended.body).toBe(200)
    expect((await socket.closed).code).toBe(4401)
    expect(other.ws.readyState).toBe(1)
  })

  it('closes a user’s open sockets with 4401 when staff deactivate the account', async () => {
    const user = await createUser(ctx)
    const socket = await open(user.accessToken)
    const deactivated = await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/deactivate`, token: manager.accessToken })
    expect(deactivated.statusCode, deactivated.body).toBe(200)
    expect((await socket.closed).code).toBe(4401)
  })
})
