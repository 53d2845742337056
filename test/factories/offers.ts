import { expect } from 'vitest'
import { request, type TestContext } from '../setup/test-app.ts'
import { sendMessage } from './messages.ts'
import { createFundedBuyer } from './orders.ts'
import { createUser, type TestUser } from './users.ts'

export interface OfferParties {
  seller: TestUser
  buyer: TestUser
  conversationId: string
}

/** A seller and a funded buyer (default 500.00) with a direct conversation the buyer opened. */
export async function offerParties(ctx: TestContext, funds = 500): Promise<OfferParties> {
  const [seller, buyer] = await Promise.all([createUser(ctx), createFundedBuyer(ctx, funds)])
  const { conversationId } = await sendMessage(ctx, buyer, { recipientId: seller.user.id }, 'Could you do a logo and labels for my roastery?')
  return { seller, buyer, conversationId }
}

export const offerBody = (overrides: Record<string, unknown> = {}) => ({
  title: 'Logo and three labels',
  description: 'A hand-drawn mark and labels for three blends.',
  price: 120,
  deliveryDays: 4,
  revisions: 2,
  ...overrides,
})

export type OfferJson = Record<string, unknown> & { id: string; status: string; orderId: string | null; expiresAt: string }

/** `POST /messages/conversations/{id}/offers` by the seller; expects 201. */
export async function makeOffer(ctx: TestContext, parties: OfferParties, overrides: Record<string, unknown> = {}): Promise<OfferJson> {
  const response = await request(ctx.app, { method: 'POST', url: `/messages/conversations/${parties.conversationId}/offers`, token: parties.seller.accessToken, payload: offerBody(overrides) })
  expect(response.statusCode, response.body).toBe(201)
  return response.json().data as OfferJson
}

/** A move on an offer: accept, decline or withdraw. */
export const offerMove = (ctx: TestContext, user: TestUser, offerId: string, move: 'accept' | 'decline' | 'withdraw', payload: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  request(ctx.app, { method: 'POST', url: `/offers/${offerId}/${move}`, token: user.accessToken, payload, headers })
