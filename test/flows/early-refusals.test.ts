/**
 * Refusals answered before the body is read to its end reach a client that sends the whole body
 * before reading the answer, as Node's fetch does: the server reads and throws away the rest, up
 * to a bound, instead of closing under the client (which then sees EPIPE, not the answer). The
 * client runs in another process, as a real one would.
 */
import type { AddressInfo, Socket } from 'node:net'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { uploads } from '../../src/modules/uploads/uploads.table.ts'
import { MB } from '../factories/files.ts'
import { sendMessage } from '../factories/messages.ts'
import { createUser, type TestUser } from '../factories/users.ts'
import { fetchFromAnotherProcess, type ClientResult } from '../setup/fetch-client.ts'
import { API, createTestApp, request, type TestContext } from '../setup/test-app.ts'

describe('early refusals, as a fetch client sees them', () => {
  let ctx: TestContext
  let base: string
  let sender: TestUser
  let other: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}${API}`
    ;[sender, other] = await Promise.all([createUser(ctx), createUser(ctx)])
  })
  afterAll(() => ctx.close())

  const uploadsOf = (userId: string) => ctx.database.db.select().from(uploads).where(eq(uploads.ownerId, userId))
  const expectRefused = (result: ClientResult, status: number, code: string, field?: string) => {
    expect(result.error, 'the client read an answer').toBeUndefined()
    expect(result.status, JSON.stringify(result.body)).toBe(status)
    expect(result.body?.error?.code).toBe(code)
    if (field) expect(result.body?.error?.details.map((detail) => detail.field)).toEqual([field])
  }

  it('answers a 6 MB upload without a token with 401', async () => {
    const result = await fetchFromAnotherProcess({ url: `${base}/uploads`, form: [{ name: 'file', filename: 'report.pdf', bytes: 6 * MB }] })
    expectRefused(result, 401, 'UNAUTHENTICATED')
  })

  it('answers a 5.1 MB avatar with 400 on file, and keeps nothing', async () => {
    const result = await fetchFromAnotherProcess({ url: `${base}/users/me/avatar`, token: sender.accessToken, form: [{ name: 'file', filename: 'me.png', bytes: Math.round(5.1 * MB) }] })
    expectRefused(result, 400, 'VALIDATION_ERROR', 'file')
    expect(result.body?.error?.details[0]?.message).toBe('must be at most 5 MB')
    expect(await uploadsOf(sender.user.id)).toEqual([])
  })

  it('answers a 10.5 MB chat attachment with 400 on file, and sends no message', async () => {
    const { conversationId } = await sendMessage(ctx, other, { recipientId: sender.user.id })
    const result = await fetchFromAnotherProcess({
      url: `${base}/messages/files`,
      token: sender.accessToken,
      form: [
        { name: 'conversationId', value: conversationId },
        { name: 'file', filename: 'brief.zip', bytes: Math.round(10.5 * MB) },
      ],
    })
    expectRefused(result, 400, 'VALIDATION_ERROR', 'file')
    expect(result.body?.error?.details[0]?.message).toBe('must be at most 10 MB')
    const page = await request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}`, token: sender.accessToken })
    expect(page.json().data.items).toHaveLength(1)
    expect(await uploadsOf(sender.user.id)).toEqual([])
  })

  it('answers a form of too many fields, before an 8 MB file, with 400 naming the first one it does not take', async () => {
    const fields = Array.from({ length: 30 }, (_, index) => ({ name: `note${index}`, value: 'x'.repeat(20) }))
    const result = await fetchFromAnotherProcess({ url: `${base}/uploads`, token: sender.accessToken, form: [...fields, { name: 'file', filename: 'big.bin', bytes: 8 * MB }] })
    expectRefused(result, 400, 'VALIDATION_ERROR', 'note0')
    expect(result.body?.error?.details[0]?.message).toBe('is not an accepted field')
    expect(await uploadsOf(sender.user.id)).toEqual([])
  })

  it('cuts off a streamed 200 MB upload after a bounded read, and goes on serving', async () => {
    const read = new Promise<number>((resolve) => ctx.app.server.once('connection', (socket: Socket) => socket.once('close', () => resolve(socket.bytesRead))))
    const result = await fetchFromAnotherProcess({ url: `${base}/uploads`, token: sender.accessToken, streamedFileBytes: 200 * MB })
    // The file up to its 10 MB limit, then at most twice the form's limit more before the cut.
    expect(await read).toBeLessThan(32 * MB)
    // The 400 may reach the client before the cut, or the cut may come first: never a success.
    expect(result.status === undefined || result.status === 400, JSON.stringify(result)).toBe(true)
    expect(await uploadsOf(sender.user.id)).toEqual([])
    expect((await request(ctx.app, { method: 'GET', url: '/users/me', token: sender.accessToken })).statusCode).toBe(200)
  })
})
