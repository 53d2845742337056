import { expect } from 'vitest'
import { request, type TestContext } from '../setup/test-app.ts'

export interface RequestJson {
  id: string
  orderId: string
  type: string
  status: string
  requestedBy: string
  reason: string
  days: number | null
  amount: number | null
  expiresAt: string
  respondedAt: string | null
  createdAt: string
}

/** `POST /orders/{orderId}/requests` as sent, for tests of refusals. */
export const sendRequest = (ctx: TestContext, token: string, orderId: string, payload: object) => request(ctx.app, { method: 'POST', url: `/orders/${orderId}/requests`, token, payload })

/** Opens a request and expects 201; answers it. */
export async function openRequest(ctx: TestContext, token: string, orderId: string, payload: { type: string; reason?: string; days?: number; amount?: number }): Promise<RequestJson> {
  const response = await sendRequest(ctx, token, orderId, { reason: 'Something changed on our side, sorry.', ...payload })
  expect(response.statusCode, response.body).toBe(201)
  return response.json().data as RequestJson
}

/** `POST /orders/{orderId}/requests/{requestId}/{verb}` as sent. */
export const answerRequest = (ctx: TestContext, token: string, orderId: string, requestId: string, verb: 'accept' | 'decline' | 'withdraw') =>
  request(ctx.app, { method: 'POST', url: `/orders/${orderId}/requests/${requestId}/${verb}`, token, payload: {} })
