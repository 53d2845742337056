import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sendMessage } from '../../../test/factories/messages.ts'
import { placeOrder } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { conversationParticipants } from './messaging.table.ts'

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

/** Staff read an order's conversation without touching it; nobody else can, and direct conversations stay closed. */
describe('GET /admin/orders/{orderId}/messages', () => {
  let ctx: TestContext
  let viewer: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    viewer = await createUser(ctx, { permissions: ['view_orders'] })
  })
  afterAll(() => ctx.close())

  const read = (token: string | undefined, orderId: string, query = '') => request(ctx.app, { method: 'GET', url: `/admin/orders/${orderId}/messages${query}`, token })
  const readMarks = async (conversationId: string) =>
    (await ctx.database.db.select().from(conversationParticipants).where(eq(conversationParticipants.conversationId, conversationId))).map((row) => [row.userId, row.lastReadSeq, row.unreadCount])

  it('answers the messages newest first with the read state the recipient left, and marks nothing read', async () => {
    const placed = await placeOrder(ctx)
    const conversationId = placed.order.conversationId as string
    const first = await sendMessage(ctx, placed.buyer, { conversationId }, 'Could you use the darker blue?')
    const second = await sendMessage(ctx, placed.seller, { conversationId }, 'Yes, I will send a draft tomorrow.')
    // The seller reads the buyer's message; the buyer has not read the seller's reply.
    expect((await request(ctx.app, { method: 'POST', url: `/messages/conversations/${conversationId}/read`, token: placed.seller.accessToken })).statusCode).toBe(200)
    const before = await readMarks(conversationId)

    const response = await read(viewer.accessToken, placed.orderId)
    expect(response.statusCode, response.body).toBe(200)
    const { items, pagination } = response.json().data
    expect(items).toEqual([
      { id: second.id, conversationId, senderId: placed.seller.user.id, content: 'Yes, I will send a draft tomorrow.', attachment: null, offer: null, isRead: false, createdAt: expect.any(String) },
      { id: first.id, conversationId, senderId: placed.buyer.user.id, content: 'Could you use the darker blue?', attachment: null, offer: null, isRead: true, createdAt: expect.any(String) },
    ])
    expect(pagination).toEqual({ page: 1, limit: 50, total: 2, pages: 1, hasNext: false, hasPrev: false, nextCursor: null })
    expect(await readMarks(conversationId)).toEqual(before)
  })

  it('pages with a cursor and with page numbers', async () => {
    const placed = await placeOrder(ctx)
    const conversationId = placed.order.conversationId as string
    const sent = []
    for (const n of [1, 2, 3, 4, 5]) sent.push(await sendMessage(ctx, n % 2 ? placed.buyer : placed.seller, { conversationId }, `Message number ${n}`))
    const page1 = (await read(viewer.accessToken, placed.orderId, '?limit=2')).json().data
    expect(page1.items.map((item: { id: string }) => item.id)).toEqual([sent[4]!.id, sent[3]!.id])
    expect(page1.pagination).toMatchObject({ total: 5, pages: 3, hasNext: true, hasPrev: false, nextCursor: expect.any(String) })
    const page2 = (await read(viewer.accessToken, placed.orderId, `?limit=2&cursor=${page1.pagination.nextCursor}`)).json().data
    expect(page2.items.map((item: { id: string }) => item.id)).toEqual([sent[2]!.id, sent[1]!.id])
    expect(page2.pagination).toMatchObject({ page: 2, hasNext: true, hasPrev: true })
    const page3 = (await read(viewer.accessToken, placed.orderId, '?limit=2&page=3')).json().data
    expect(page3.items.map((item: { id: string }) => item.id)).toEqual([sent[0]!.id])
    expect(page3.pagination).toMatchObject({ page: 3, hasNext: false, nextCursor: null })
  })

  it('is 401 without a token, 403 without view_orders (a party of the order included), 404 for an unknown order', async () => {
    const placed = await placeOrder(ctx)
    expectError(await read(undefined, placed.orderId), 401, 'UNAUTHENTICATED')
    expectError(await read(placed.buyer.accessToken, placed.orderId), 403, 'FORBIDDEN')
    expectError(await read((await createUser(ctx, { permissions: ['view_kyc'] })).accessToken, placed.orderId), 403, 'FORBIDDEN')
    expectError(await read(viewer.accessToken, UNKNOWN_ID), 404, 'NOT_FOUND')
    expectError(await read(viewer.accessToken, 'not-an-id'), 404, 'NOT_FOUND')
  })

  it('refuses a bad cursor or limit, naming the field', async () => {
    const placed = await placeOrder(ctx)
    expectError(await read(viewer.accessToken, placed.orderId, '?cursor=abc'), 400, 'VALIDATION_ERROR', ['cursor'])
    expectError(await read(viewer.accessToken, placed.orderId, '?limit=0'), 400, 'VALIDATION_ERROR', ['limit'])
  })
})
