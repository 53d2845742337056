import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import { eq } from 'drizzle-orm'
import type { WebSocket } from 'ws'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { sendMessage } from '../../../test/factories/messages.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { listen, openSocket, refusedUpgrade, type SocketAuth, type TestSocket } from '../../../test/setup/sockets.ts'
import { twoInstances } from '../../../test/setup/instances.ts'
import { createTestApp, expectError, request, TEST_REDIS_URL, type TestContext } from '../../../test/setup/test-app.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { users } from '../users/users.table.ts'
import { messages } from './messaging.table.ts'

const mailJobsFor = (ctx: TestContext, messageId: string) =>
  ctx.database.db
    .select()
    .from(outboxJobs)
    .where(eq(outboxJobs.topic, 'mail.new_message'))
    .then((rows) => rows.filter((row) => (row.payload as { messageId?: string }).messageId === messageId))

describe('realtime delivery over WebSocket', () => {
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

  const open = async (...args: Parameters<typeof openSocket>) => {
    const socket = await openSocket(...args)
    sockets.push(socket)
    return socket
  }

  it('delivers every message to all the sockets of both participants and none to a stranger', async () => {
    const alice = await createUser(ctx)
    const bob = await createUser(ctx)
    const stranger = await createUser(ctx)
    const aliceDesktop = await open(url, { header: alice.accessToken })
    const alicePhone = await open(url, { subprotocol: alice.accessToken })
    const bobSocket = await open(url, { header: bob.accessToken })
    const strangerSocket = await open(url, { header: stranger.accessToken })
    expect(alicePhone.ws.protocol).toBe('bearer')

    const hello = await sendMessage(ctx, alice, { recipientId: bob.user.id }, 'Hello Bob')
    const reply = await sendMessage(ctx, bob, { conversationId: hello.conversationId }, 'Hi Alice')
    for (const socket of [aliceDesktop, alicePhone, bobSocket]) {
      const frame = await socket.message(hello.id)
      expect(frame).toEqual({ type: 'message', data: { ...hello } })
      await socket.message(reply.id)
    }
    // Frames to one socket arrive in order: once this one is in, any earlier frame would be too.
    const sentinel = await sendMessage(ctx, await createUser(ctx), { recipientId: stranger.user.id }, 'for the stranger')
    await strangerSocket.message(sentinel.id)
    expect(strangerSocket.messageIds()).toEqual([sentinel.id])
    expect(aliceDesktop.messageIds()).toEqual([hello.id, reply.id])
    expect(bobSocket.messageIds()).toEqual([hello.id, reply.id])
  })

  it('sends read receipts to both participants’ sockets when the recipient reads', async () => {
    const alice = await createUser(ctx)
    const bob = await createUser(ctx)
    const aliceSocket = await open(url, { header: alice.accessToken })
    const bobSocket = await open(url, { header: bob.accessToken })
    const hello = await sendMessage(ctx, alice, { recipientId: bob.user.id })
    expect((await request(ctx.app, { method: 'GET', url: `/messages/conversations/${hello.conversationId}`, token: bob.accessToken })).statusCode).toBe(200)
    for (const socket of [aliceSocket, bobSocket]) {
      const receipt = await socket.next((frame) => frame.type === 'read')
      expect(receipt.data).toEqual({ conversationId: hello.conversationId, userId: bob.user.id, readAt: ctx.clock.now().toISOString() })
    }
  })

  it('numbers concurrent replies to an online recipient one after another and keeps both counters right', async () => {
    const alice = await createUser(ctx)
    const bob = await createUser(ctx)
    const bobSocket = await open(url, { header: bob.accessToken })
    const first = await sendMessage(ctx, alice, { recipientId: bob.user.id }, 'first')
    const replies = await Promise.all(Array.from({ length: 12 }, (_, index) => sendMessage(ctx, alice, { conversationId: first.conversationId }, `reply ${index}`)))
    for (const reply of replies) await bobSocket.message(reply.id)
    const stored = await ctx.database.db.select({ seq: messages.seq }).from(messages).where(eq(messages.conversationId, first.conversationId))
    expect(stored.map((row) => row.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 13 }, (_, index) => index + 1))
    const conversations = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/messages/conversations', token: user.accessToken })).json().data.items
    expect((await conversations(bob))[0]).toMatchObject({ id: first.conversationId, unreadCount: 13 })
    expect((await conversations(alice))[0]).toMatchObject({ id: first.conversationId, unreadCount: 0 })
    expect(await mailJobsFor(ctx, replies[0]!.id)).toEqual([])
  })

  it('writes messages by recipientId to an online user in their open conversation, numbered in order, and checks the account on each', async () => {
    const alice = await createUser(ctx)
    const bob = await createUser(ctx)
    const bobSocket = await open(url, { header: bob.accessToken })
    const first = await sendMessage(ctx, alice, { recipientId: bob.user.id }, 'first')
    const more = await Promise.all(Array.from({ length: 8 }, (_, index) => sendMessage(ctx, alice, { recipientId: bob.user.id }, `more ${index}`)))
    for (const message of more) {
      expect(message.conversationId).toBe(first.conversationId)
      expect(await bobSocket.message(message.id)).toEqual({ type: 'message', data: message })
    }
    const seqs = async () => (await ctx.database.db.select({ seq: messages.seq }).from(messages).where(eq(messages.conversationId, first.conversationId))).map((row) => row.seq).sort((a, b) => a - b)
    expect(await seqs()).toEqual(Array.from({ length: 9 }, (_, index) => index + 1))
    const [bobsList] = (await request(ctx.app, { method: 'GET', url: '/messages/conversations', token: bob.accessToken })).json().data.items
    expect(bobsList).toMatchObject({ id: first.conversationId, unreadCount: 9 })
    expect(await mailJobsFor(ctx, more[0]!.id)).toEqual([])

    // The id in capitals is the same person: the same conversation, pushed to their socket, no e-mail.
    const shouted = await sendMessage(ctx, alice, { recipientId: bob.user.id.toUpperCase() }, 'SHOUTED')
    expect(shouted.conversationId).toBe(first.conversationId)
    expect(await bobSocket.message(shouted.id)).toEqual({ type: 'message', data: shouted })
    expect(await mailJobsFor(ctx, shouted.id)).toEqual([])
    expect(await seqs()).toHaveLength(10)

    // Suspended behind the socket's back (the socket stays open, so Bob still counts as online): refused, nothing written.
    await ctx.database.db.update(users).set({ suspendedAt: ctx.clock.now() }).where(eq(users.id, bob.user.id))
    try {
      expectError(await request(ctx.app, { method: 'POST', url: '/messages', token: alice.accessToken, payload: { recipientId: bob.user.id, content: 'still there?' } }), 422, 'RECIPIENT_UNAVAILABLE')
      expect(await seqs()).toHaveLength(10)
    } finally {
      await ctx.database.db.update(users).set({ suspendedAt: null }).where(eq(users.id, bob.user.id))
    }
  })

  it('e-mails a recipient with no open socket, and not one with a socket open', async () => {
    const alice = await createUser(ctx)
    const bob = await createUser(ctx)
    const carol = await createUser(ctx)
    await open(url, { header: bob.accessToken })
    const toBob = await sendMessage(ctx, alice, { recipientId: bob.user.id })
    const toCarol = await sendMessage(ctx, alice, { recipientId: carol.user.id })
    expect(await mailJobsFor(ctx, toBob.id)).toEqual([])
    expect(await mailJobsFor(ctx, toCarol.id)).toHaveLength(1)
  })

  describe('the upgrade', () => {
    let user: TestUser
    beforeAll(async () => {
      user = await createUser(ctx)
    })

    const refusals: [string, () => Promise<Parameters<typeof refusedUpgrade>[1]>][] = [
      ['no token', async () => ({ none: true })],
      ['a garbage token', async () => ({ header: 'not.a.token' })],
      ['a garbage token as subprotocol', async () => ({ subprotocol: 'garbage' })],
      ['a refresh token', async () => ({ header: user.refreshToken })],
      ['a refresh token as subprotocol', async () => ({ subprotocol: user.refreshToken })],
      ['another scheme word', async () => ({ headers: { authorization: `Token ${user.accessToken}` } })],
      [
        'a revoked token (logged out)',
        async () => {
          const session = await createUser(ctx)
          expect((await request(ctx.app, { method: 'POST', url: '/auth/logout', token: session.accessToken })).statusCode).toBe(200)
          return { header: session.accessToken }
        },
      ],
      ['an expired token', async () => ({ header: user.accessToken })],
    ]
    for (const [name, auth] of refusals) {
      it(`refuses ${name} with 401 before upgrading`, async () => {
        if (name === 'an expired token') ctx.clock.advance(16 * 60_000)
        try {
          const refused = await refusedUpgrade(url, await auth())
          expect(refused.status).toBe(401)
          expect(JSON.parse(refused.body)).toMatchObject({ success: false, error: { code: 'UNAUTHENTICATED' } })
        } finally {
          if (name === 'an expired token') ctx.clock.advance(-16 * 60_000)
        }
      })
    }

    it('never reads the token from the URL', async () => {
      const refused = await refusedUpgrade(`${url}?token=${user.accessToken}&access_token=${user.accessToken}`, { none: true })
      expect(refused.status).toBe(401)
    })

    it('answers a plain GET (no upgrade) with 404 in the envelope', async () => {
      const response = await request(ctx.app, { method: 'GET', url: '/messages/ws', token: user.accessToken })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } })
    })
  })

  describe('closing', () => {
    it("closes the logged-out session's sockets with 4401 and keeps the user's other sessions", async () => {
      const alice = await createUser(ctx)
      const otherSession = { ...alice, ...(await ctx.app.container.auth.issueSession(alice.user)) }
      const leaving = await open(url, { header: alice.accessToken })
      const leavingToo = await open(url, { subprotocol: alice.accessToken })
      const staying = await open(url, { header: otherSession.accessToken })
      expect((await request(ctx.app, { method: 'POST', url: '/auth/logout', token: alice.accessToken })).statusCode).toBe(200)
      expect((await leaving.closed).code).toBe(4401)
      expect((await leavingToo.closed).code).toBe(4401)
      const later = await sendMessage(ctx, await createUser(ctx), { recipientId: alice.user.id })
      await staying.message(later.id)
      expect(staying.ws.readyState).toBe(1)
    })

    it("closes the sockets of a session whose refresh token was reused (stolen), with 4401", async () => {
      const user = await createUser(ctx)
      const socket = await open(url, { header: user.accessToken })
      const refresh = () => request(ctx.app, { method: 'POST', url: '/auth/refresh', payload: { refreshToken: user.refreshToken } })
      expect((await refresh()).statusCode).toBe(200)
      expect((await refresh()).statusCode).toBe(401)
      expect((await socket.closed).code).toBe(4401)
    })

    it('closes every socket of a user whose password is reset, with 4401', async () => {
      const user = await createUser(ctx)
      const socket = await open(url, { subprotocol: user.accessToken })
      expect((await request(ctx.app, { method: 'POST', url: '/auth/forgot-password', payload: { email: user.user.email } })).statusCode).toBe(200)
      while ((await ctx.app.container.worker.runOnce()).processed > 0);
      const token = ctx.mailer.tokenTo(user.user.email)
      expect((await request(ctx.app, { method: 'POST', url: '/auth/reset-password', payload: { token, password: 'N3w-Passw0rd-2026' } })).statusCode).toBe(200)
      expect((await socket.closed).code).toBe(4401)
    })

    it('closes every socket of a user with 4401 on disconnectUser (suspension)', async () => {
      const user = await createUser(ctx)
      const bystander = await createUser(ctx)
      const first = await open(url, { header: user.accessToken })
      const second = await open(url, { subprotocol: user.accessToken })
      const other = await open(url, { header: bystander.accessToken })
      await ctx.app.container.realtime.disconnectUser(user.user.id)
      expect((await first.closed).code).toBe(4401)
      expect((await second.closed).code).toBe(4401)
      // Refusing the user's tokens is the suspension's own business (admin module); here only sockets close.
      const after = await sendMessage(ctx, user, { recipientId: bystander.user.id })
      await other.message(after.id)
      expect(other.ws.readyState).toBe(1)
    })

    it('drops a socket that stops answering pings after one missed heartbeat, and keeps a live one', async () => {
      const user = await createUser(ctx)
      const live = await open(url, { header: user.accessToken })
      const before = new Set(ctx.app.websocketServer.clients)
      const dead = await open(url, { header: user.accessToken }, { autoPong: false })
      const deadOnServer = [...ctx.app.websocketServer.clients].find((client) => !before.has(client))!
      // Sockets of earlier tests that are still closing are not pinged; every open one answers.
      const liveAnswers = Promise.all([...before].filter((client) => client.readyState === 1).map((client) => new Promise<void>((resolve) => client.once('pong', () => resolve()))))
      const counted = ctx.app.container.realtime.localSocketCount()
      await ctx.app.container.realtime.heartbeat()
      // Every other socket of this app answers the first ping (their clients pong automatically).
      await liveAnswers
      await ctx.app.container.realtime.heartbeat()
      expect((await dead.closed).code).toBe(1006)
      expect(deadOnServer.readyState).toBe(3)
      expect(ctx.app.container.realtime.localSocketCount()).toBe(counted - 1)
      const later = await sendMessage(ctx, await createUser(ctx), { recipientId: user.user.id })
      await live.message(later.id)
    })
  })
})

/** Opens a socket and answers it with its server side (sockets are opened one at a time here). */
async function openTracked(ctx: TestContext, url: string, auth: SocketAuth) {
  const before = new Set(ctx.app.websocketServer.clients)
  const socket = await openSocket(url, auth)
  const server = [...ctx.app.websocketServer.clients].find((client) => !before.has(client))!
  return { socket, server }
}

/** Closes a socket from the client and waits until the server has let it go (its place is free again). */
async function closeTracked(tracked: { socket: TestSocket; server: WebSocket }) {
  const released = new Promise((resolve) => tracked.server.once('close', resolve))
  tracked.socket.close()
  await released
}

describe('limits of the chat socket', () => {
  let ctx: TestContext
  let url: string
  const logLines: { level: number; msg: string; [key: string]: unknown }[] = []
  const logged = new EventEmitter()
  const sockets: TestSocket[] = []
  beforeAll(async () => {
    const logStream = new PassThrough()
    logStream.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        logLines.push(JSON.parse(line))
        logged.emit('line')
      }
    })
    // WS_MAX_SOCKETS_PER_USER is left to its default (10).
    ctx = await createTestApp({ env: { WS_HEARTBEAT_SECONDS: '3600', LOG_LEVEL: 'warn' }, logStream })
    url = await listen(ctx.app)
  })
  afterAll(async () => {
    for (const socket of sockets) socket.close()
    await ctx.close()
  })
  const open = async (auth: SocketAuth) => {
    const tracked = await openTracked(ctx, url, auth)
    sockets.push(tracked.socket)
    return tracked
  }

  it('accepts 10 sockets of one person across logins, refuses the 11th with 429 TOO_MANY_SOCKETS, and the 10 work', async () => {
    const alice = await createUser(ctx)
    const phone = { ...alice, ...(await ctx.app.container.auth.issueSession(alice.user)) }
    const opened = []
    for (let index = 0; index < 10; index++) opened.push(await open(index % 2 === 0 ? { header: alice.accessToken } : { subprotocol: phone.accessToken }))
    for (const auth of [{ header: alice.accessToken }, { subprotocol: phone.accessToken }]) {
      const refused = await refusedUpgrade(url, auth)
      expect(refused.status).toBe(429)
      expect(JSON.parse(refused.body)).toMatchObject({ success: false, error: { code: 'TOO_MANY_SOCKETS' } })
    }
    // Someone else is not affected by Alice's sockets.
    const bob = await createUser(ctx)
    const bobSocket = await open({ header: bob.accessToken })
    const hello = await sendMessage(ctx, bob, { recipientId: alice.user.id }, 'Ten devices?')
    for (const { socket } of opened) expect((await socket.message(hello.id)).data).toMatchObject({ content: 'Ten devices?' })
    await bobSocket.socket.message(hello.id)
    expect(opened.every(({ socket }) => socket.ws.readyState === 1)).toBe(true)
  })

  it('frees a place when one of the sockets closes, and only one', async () => {
    const carol = await createUser(ctx)
    const opened = []
    for (let index = 0; index < 10; index++) opened.push(await open({ header: carol.accessToken }))
    expect((await refusedUpgrade(url, { header: carol.accessToken })).status).toBe(429)
    await closeTracked(opened[3]!)
    const replacement = await open({ header: carol.accessToken })
    expect(replacement.socket.ws.readyState).toBe(1)
    expect((await refusedUpgrade(url, { header: carol.accessToken })).status).toBe(429)
    // Sockets the server closes (the logout of their session) free their places too.
    const other = { ...carol, ...(await ctx.app.container.auth.issueSession(carol.user)) }
    expect((await request(ctx.app, { method: 'POST', url: '/auth/logout', token: carol.accessToken })).statusCode).toBe(200)
    const stillOpen = [...opened.filter((_, index) => index !== 3), replacement]
    expect((await Promise.all(stillOpen.map(({ socket }) => socket.closed))).map((closed) => closed.code)).toEqual(Array(10).fill(4401))
    for (let index = 0; index < 10; index++) await open({ header: other.accessToken })
    expect((await refusedUpgrade(url, { header: other.accessToken })).status).toBe(429)
  })

  it('logs a frame over 64 KB at warn, without a stack, and closes that socket with 1009', async () => {
    const dave = await createUser(ctx)
    const { socket } = await open({ header: dave.accessToken })
    const warned = new Promise<void>((resolve) => {
      const check = () => {
        if (logLines.some((line) => line.msg.includes('broke the protocol'))) {
          logged.off('line', check)
          resolve()
        }
      }
      logged.on('line', check)
      check()
    })
    socket.ws.send('x'.repeat(64 * 1024 + 1))
    expect((await socket.closed).code).toBe(1009)
    await warned
    const line = logLines.find((candidate) => candidate.msg.includes('broke the protocol'))!
    expect(line).toMatchObject({ level: 40, code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', maxPayload: 65536 })
    expect(JSON.stringify(line)).not.toContain('stack')
    expect(logLines.filter((candidate) => candidate.level >= 50)).toEqual([])
  })
})

describe('a flood of 1,000 messages from one user', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { RATE_LIMIT_GENERAL: '100', WS_HEARTBEAT_SECONDS: '3600' } })
  })
  afterAll(() => ctx.close())

  it('hits the rate limit, and every accepted message is stored and delivered', async () => {
    const url = await listen(ctx.app)
    const alice = await createUser(ctx)
    const bob = await createUser(ctx)
    const bobSocket = await openSocket(url, { header: bob.accessToken })
    const aliceSocket = await openSocket(url, { header: alice.accessToken })
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, index) => request(ctx.app, { method: 'POST', url: '/messages', token: alice.accessToken, payload: { recipientId: bob.user.id, content: `flood ${index}` } })),
    )
    const statuses = answers.map((answer) => answer.statusCode)
    expect(statuses.filter((status) => status !== 201 && status !== 429)).toEqual([])
    const accepted = answers.filter((answer) => answer.statusCode === 201).map((answer) => answer.json().data as { id: string; conversationId: string })
    expect(accepted.length).toBeGreaterThan(0)
    expect(accepted.length).toBeLessThanOrEqual(100)
    expect(statuses.filter((status) => status === 429).length).toBe(1000 - accepted.length)
    const stored = await ctx.database.db.select({ id: messages.id }).from(messages).where(eq(messages.senderId, alice.user.id))
    expect(stored.map((row) => row.id).sort()).toEqual(accepted.map((message) => message.id).sort())
    expect(new Set(accepted.map((message) => message.conversationId)).size).toBe(1)
    for (const message of accepted) {
      await bobSocket.message(message.id)
      await aliceSocket.message(message.id)
    }
    expect(bobSocket.messageIds()).toHaveLength(accepted.length)
    bobSocket.close()
    aliceSocket.close()
  }, 120_000)
})

// PostgreSQL and Redis only: two API instances share one database and one Redis, as behind a load balancer.
describe.runIf(inject('pgTemplate') && TEST_REDIS_URL)('two instances on one PostgreSQL and Redis', () => {
  const instances = twoInstances({ REDIS_URL: TEST_REDIS_URL, WS_HEARTBEAT_SECONDS: '3600' }, { listen: true })

  it('delivers a message sent through instance 1 to a socket on instance 2', async () => {
    expect(instances.first.app.container.realtime.kind).toBe('redis')
    const alice = await createUser(instances.first)
    const bob = await createUser(instances.first)
    const bobSocket = await openSocket(instances.secondUrl, { header: bob.accessToken })
    const aliceSocket = await openSocket(instances.secondUrl, { subprotocol: alice.accessToken })
    const hello = await sendMessage(instances.first, alice, { recipientId: bob.user.id }, 'across instances')
    expect((await bobSocket.message(hello.id)).data).toMatchObject({ content: 'across instances' })
    await aliceSocket.message(hello.id)
    // Bob's socket is on instance 2: instance 1 sees him present through Redis and does not e-mail.
    expect(await mailJobsFor(instances.first, hello.id)).toEqual([])
    bobSocket.close()
    aliceSocket.close()
  })

  it('closes a socket on instance 2 with 4401 when instance 1 logs its session out', async () => {
    const carol = await createUser(instances.first)
    const socket = await openSocket(instances.secondUrl, { header: carol.accessToken })
    expect((await request(instances.first.app, { method: 'POST', url: '/auth/logout', token: carol.accessToken })).statusCode).toBe(200)
    expect((await socket.closed).code).toBe(4401)
  })

  it('e-mails a recipient whose sockets are all closed', async () => {
    const alice = await createUser(instances.first)
    const dave = await createUser(instances.first)
    const socket = await openSocket(instances.secondUrl, { header: dave.accessToken })
    socket.close()
    await socket.closed
    await instances.first.app.container.realtime.disconnectUser(dave.user.id)
    const hello = await sendMessage(instances.first, alice, { recipientId: dave.user.id })
    expect(await mailJobsFor(instances.first, hello.id)).toHaveLength(1)
  })
})

// Redis only (skipped without it): two instances on one database and one Redis count one cap.
describe.runIf(TEST_REDIS_URL)('the socket cap across two instances sharing Redis', () => {
  const instances = twoInstances({ REDIS_URL: TEST_REDIS_URL, WS_HEARTBEAT_SECONDS: '3600', WS_MAX_SOCKETS_PER_USER: '4' }, { listen: true })
  const sockets: TestSocket[] = []
  // Runs before the instances close (after-hooks run in reverse order of registration).
  afterAll(() => {
    for (const socket of sockets) socket.close()
  })

  it('holds one cap for a person whose sockets are on both instances, and a place freed on one is taken on the other', async () => {
    expect(instances.second.app.container.realtime.kind).toBe('redis')
    const erin = await createUser(instances.first)
    const onFirst = [await openTracked(instances.first, instances.firstUrl, { header: erin.accessToken }), await openTracked(instances.first, instances.firstUrl, { subprotocol: erin.accessToken })]
    const onSecond = [await openTracked(instances.second, instances.secondUrl, { header: erin.accessToken }), await openTracked(instances.second, instances.secondUrl, { header: erin.accessToken })]
    sockets.push(...[...onFirst, ...onSecond].map((tracked) => tracked.socket))
    for (const target of [instances.firstUrl, instances.secondUrl]) {
      const refused = await refusedUpgrade(target, { header: erin.accessToken })
      expect(refused.status).toBe(429)
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'TOO_MANY_SOCKETS' } })
    }
    await closeTracked(onFirst[0]!)
    // The instance gave the place back in Redis on its one connection: a heartbeat sent after it on
    // that connection is answered after it.
    await instances.first.app.container.realtime.heartbeat()
    sockets.push((await openTracked(instances.second, instances.secondUrl, { header: erin.accessToken })).socket)
    expect((await refusedUpgrade(instances.firstUrl, { header: erin.accessToken })).status).toBe(429)
    // Every one of the four still works, whichever instance holds it.
    const hello = await sendMessage(instances.first, await createUser(instances.first), { recipientId: erin.user.id })
    for (const socket of sockets.filter((candidate) => candidate.ws.readyState === 1)) await socket.message(hello.id)
  })
})
