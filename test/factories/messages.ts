import { expect } from 'vitest'
import { request, type TestContext } from '../setup/test-app.ts'
import type { TestUser } from './users.ts'

/** Sends a message over HTTP and answers it (201 expected). */
export async function sendMessage(ctx: TestContext, from: TestUser, to: { recipientId: string } | { conversationId: string }, content = 'Hello there'): Promise<{ id: string; conversationId: string; [key: string]: unknown }> {
  const response = await request(ctx.app, { method: 'POST', url: '/messages', token: from.accessToken, payload: { ...to, content } })
  expect(response.statusCode, response.body).toBe(201)
  return response.json().data
}
