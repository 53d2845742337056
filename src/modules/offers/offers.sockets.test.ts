import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeOffer, offerMove, offerParties, type OfferJson } from '../../../test/factories/offers.ts'
import { createUser } from '../../../test/factories/users.ts'
import { listen, openSocket, type TestSocket } from '../../../test/setup/sockets.ts'
import { createTestApp, type TestContext } from '../../../test/setup/test-app.ts'
import { messages } from '../messaging/messaging.table.ts'
import { offers as offersTable } from './offers.table.ts'

describe('offers over the chat sockets', () => {
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

  it('reaches both participants as a message carrying the offer, and nobody else', async () => {
    const parties = await offerParties(ctx)
    const stranger = await createUser(ctx)
    const [sellerSocket, buyerSocket, strangerSocket] = await Promise.all([
      openSocket(url, { header: parties.seller.accessToken }),
      openSocket(url, { header: parties.buyer.accessToken }),
      openSocket(url, { header: stranger.accessToken }),
    ])
    sockets.push(sellerSocket, buyerSocket, strangerSocket)
    const offer = await makeOffer(ctx, parties)
    const [message] = await ctx.database.db.select().from(messages).where(eq(messages.offerId, offer.id))
    for (const socket of [sellerSocket, buyerSocket]) {
      const frame = await socket.message(message!.id)
      expect(frame.data).toMatchObject({ conversationId: parties.conversationId, senderId: parties.seller.user.id, attachment: null, offer })
    }
    expect(strangerSocket.messageIds()).toEqual([])
  })

  it('pushes an offer frame to both parties when the offer is accepted, declined, withdrawn or expires', async () => {
    const parties = await offerParties(ctx)
    const [sellerSocket, buyerSocket] = await Promise.all([openSocket(url, { header: parties.seller.accessToken }), openSocket(url, { header: parties.buyer.accessToken })])
    sockets.push(sellerSocket, buyerSocket)
    const offers = await Promise.all(['accept', 'decline', 'withdraw', 'expire'].map(() => makeOffer(ctx, parties, { expiresInDays: 2 })))
    const [accepted, declined, withdrawn, expiring] = offers as [OfferJson, OfferJson, OfferJson, OfferJson]
    expect((await offerMove(ctx, parties.buyer, accepted.id, 'accept')).statusCode).toBe(201)
    expect((await offerMove(ctx, parties.buyer, declined.id, 'decline', { reason: 'Not now' })).statusCode).toBe(200)
    expect((await offerMove(ctx, parties.seller, withdrawn.id, 'withdraw')).statusCode).toBe(200)
    await ctx.database.db.update(offersTable).set({ expiresAt: ctx.clock.now() }).where(eq(offersTable.id, expiring.id))
    expect(await ctx.app.container.offers.expireDueOffers()).toBe(1)
    const frameOf = (socket: TestSocket, id: string, status: string) => socket.next((frame) => frame.type === 'offer' && frame.data.id === id && frame.data.status === status)
    for (const socket of [sellerSocket, buyerSocket]) {
      expect((await frameOf(socket, accepted.id, 'accepted')).data).toMatchObject({ orderId: expect.any(String) })
      expect((await frameOf(socket, declined.id, 'declined')).data).toMatchObject({ declineReason: 'Not now' })
      await frameOf(socket, withdrawn.id, 'withdrawn')
      await frameOf(socket, expiring.id, 'expired')
    }
  })
})
