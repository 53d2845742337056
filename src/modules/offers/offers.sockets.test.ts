import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeOffer, offerParties } from '../../../test/factories/offers.ts'
import { createUser } from '../../../test/factories/users.ts'
import { listen, openSocket, type TestSocket } from '../../../test/setup/sockets.ts'
import { createTestApp, type TestContext } from '../../../test/setup/test-app.ts'
import { messages } from '../messaging/messaging.table.ts'

describe('an offer over the chat sockets', () => {
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
})
