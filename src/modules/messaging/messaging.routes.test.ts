import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileForm, MB, multipart, opaqueBytes, png } from '../../../test/factories/files.ts'
import { sendMessage } from '../../../test/factories/messages.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { conversationParticipants, conversations, messages } from './messaging.table.ts'

describe('messaging over HTTP', () => {
  let ctx: TestContext
  let alice: TestUser
  let bob: TestUser
  let stranger: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    alice = await createUser(ctx)
    bob = await createUser(ctx)
    stranger = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  const post = (user: TestUser | undefined, payload: object) => request(ctx.app, { method: 'POST', url: '/messages', token: user?.accessToken, payload })
  const list = (user: TestUser, query = '') => request(ctx.app, { method: 'GET', url: `/messages/conversations${query}`, token: user.accessToken })
  const read = (user: TestUser, conversationId: string, query = '') => request(ctx.app, { method: 'GET', url: `/messages/conversations/${conversationId}${query}`, token: user.accessToken })
  /** New tokens after the clock moved past the access token's 15 minutes. */
  const fresh = async (user: TestUser): Promise<TestUser> => ({ ...user, ...(await ctx.app.container.auth.issueSession(user.user)) })
  const drainOutbox = async () => {
    while ((await ctx.app.container.worker.runOnce()).processed > 0);
  }
  const pair = async () => ({ a: await createUser(ctx), b: await createUser(ctx) })
  const mailJobs = (messageId: string) => ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'mail.new_message')).then((rows) => rows.filter((row) => (row.payload as { messageId?: string }).messageId === messageId))

  describe('POST /messages', () => {
    it('answers 401 without a token', async () => {
      expectError(await post(undefined, { recipientId: bob.user.id, content: 'hi' }), 401, 'UNAUTHENTICATED')
    })

    it('starts the direct conversation with recipientId and answers the message (201)', async () => {
      const { a, b } = await pair()
      const response = await post(a, { recipientId: b.user.id, content: 'Hello Bob' })
      expect(response.statusCode, response.body).toBe(201)
      const message = response.json().data
      expect(message).toEqual({ id: expect.any(String), conversationId: expect.any(String), senderId: a.user.id, content: 'Hello Bob', attachment: null, offer: null, isRead: false, createdAt: ctx.clock.now().toISOString() })
      const [conversation] = await ctx.database.db.select().from(conversations).where(eq(conversations.id, message.conversationId))
      expect(conversation).toMatchObject({ lastSeq: 1, orderId: null })
      const participants = await ctx.database.db.select().from(conversationParticipants).where(eq(conversationParticipants.conversationId, message.conversationId))
      expect(participants.map((row) => [row.userId, row.unreadCount]).sort()).toEqual([[a.user.id, 0], [b.user.id, 1]].sort())
    })

    it('reuses the direct conversation of a pair, whoever writes, by recipientId or conversationId', async () => {
      const { a, b } = await pair()
      const first = await sendMessage(ctx, a, { recipientId: b.user.id })
      const reply = await sendMessage(ctx, b, { recipientId: a.user.id })
      const third = await sendMessage(ctx, a, { conversationId: first.conversationId })
      expect(new Set([first.conversationId, reply.conversationId, third.conversationId]).size).toBe(1)
      expect(await ctx.database.db.select().from(messages).where(eq(messages.conversationId, first.conversationId))).toHaveLength(3)
    })

    it('opens one conversation when both users write first at the same moment', async () => {
      const { a, b } = await pair()
      const [one, two] = await Promise.all([sendMessage(ctx, a, { recipientId: b.user.id }), sendMessage(ctx, b, { recipientId: a.user.id })])
      expect(one.conversationId).toBe(two.conversationId)
    })

    it('refuses a message to yourself with 422 INVALID_RECIPIENT, your id in either case', async () => {
      expectError(await post(alice, { recipientId: alice.user.id, content: 'note to self' }), 422, 'INVALID_RECIPIENT')
      expectError(await post(alice, { recipientId: alice.user.id.toUpperCase(), content: 'NOTE TO SELF' }), 422, 'INVALID_RECIPIENT')
    })

    it('answers 404 for an unknown recipient and for one who never activated their account', async () => {
      expectError(await post(alice, { recipientId: '018f0000-0000-7000-8000-000000000000', content: 'hi' }), 404, 'NOT_FOUND')
      const inactive = await createUser(ctx, { isActive: false })
      expectError(await post(alice, { recipientId: inactive.user.id, content: 'hi' }), 404, 'NOT_FOUND')
    })

    describe('to an account that cannot answer: 422 RECIPIENT_UNAVAILABLE, nothing written', () => {
      let admin: TestUser
      beforeAll(async () => {
        admin = await createUser(ctx, { isStaff: true, isSuperuser: true })
      })
      const suspend = async (user: TestUser) => expect((await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/suspend`, token: admin.accessToken, payload: { reason: 'Spam' } })).statusCode).toBe(200)
      const staffAction = async (user: TestUser, action: 'deactivate' | 'reactivate' | 'unsuspend') =>
        expect((await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/${action}`, token: admin.accessToken })).statusCode).toBe(200)
      const messagesBy = (user: TestUser) => ctx.database.db.select().from(messages).where(eq(messages.senderId, user.user.id))
      const directsOf = (user: TestUser) => ctx.database.db.select().from(conversationParticipants).where(eq(conversationParticipants.userId, user.user.id))

      it('a new conversation with a suspended user', async () => {
        const { a, b } = await pair()
        await suspend(b)
        expectError(await post(a, { recipientId: b.user.id, content: 'Are you there?' }), 422, 'RECIPIENT_UNAVAILABLE')
        expect(await directsOf(b)).toEqual([])
        expect(await messagesBy(a)).toEqual([])
      })

      it('an existing conversation after the other party was suspended, by conversationId, by recipientId and with a file; again once unsuspended', async () => {
        const { a, b } = await pair()
        const first = await sendMessage(ctx, a, { recipientId: b.user.id })
        await suspend(b)
        expectError(await post(a, { conversationId: first.conversationId, content: 'Hello?' }), 422, 'RECIPIENT_UNAVAILABLE')
        expectError(await post(a, { recipientId: b.user.id, content: 'Hello?' }), 422, 'RECIPIENT_UNAVAILABLE')
        const form = multipart([{ name: 'conversationId', value: first.conversationId }, { name: 'file', filename: 'notes.bin', content: opaqueBytes(100) }])
        expectError(await request(ctx.app, { method: 'POST', url: '/messages/files', token: a.accessToken, payload: form.payload, headers: form.headers }), 422, 'RECIPIENT_UNAVAILABLE')
        expect((await messagesBy(a)).map((message) => message.id)).toEqual([first.id])
        await staffAction(b, 'unsuspend')
        await sendMessage(ctx, a, { conversationId: first.conversationId }, 'Welcome back')
      })

      it('a deactivated user, in a new conversation and in an existing one', async () => {
        const { a, b } = await pair()
        const c = await createUser(ctx)
        const first = await sendMessage(ctx, a, { recipientId: b.user.id })
        await staffAction(b, 'deactivate')
        await staffAction(c, 'deactivate')
        expectError(await post(a, { conversationId: first.conversationId, content: 'Hello?' }), 422, 'RECIPIENT_UNAVAILABLE')
        expectError(await post(a, { recipientId: c.user.id, content: 'Hello?' }), 422, 'RECIPIENT_UNAVAILABLE')
        expect((await messagesBy(a)).map((message) => message.id)).toEqual([first.id])
        expect(await directsOf(c)).toEqual([])
      })

      it('staff accounts can be written to, in a new conversation and an existing one', async () => {
        const client = await createUser(ctx)
        const staff = await createUser(ctx, { permissions: ['view_orders'] })
        const first = await sendMessage(ctx, client, { recipientId: staff.user.id }, 'My order is stuck')
        await sendMessage(ctx, client, { conversationId: first.conversationId }, 'It is order 42')
        await sendMessage(ctx, client, { recipientId: admin.user.id }, 'And to the superuser')
      })
    })

    it("answers 404 for another pair's conversation, and writes nothing", async () => {
      const { a, b } = await pair()
      const theirs = await sendMessage(ctx, a, { recipientId: b.user.id })
      expectError(await post(stranger, { conversationId: theirs.conversationId, content: 'let me in' }), 404, 'NOT_FOUND')
      expectError(await post(stranger, { conversationId: '018f0000-0000-7000-8000-000000000000', content: 'hi' }), 404, 'NOT_FOUND')
      expect(await ctx.database.db.select().from(messages).where(eq(messages.conversationId, theirs.conversationId))).toHaveLength(1)
    })

    const refusals: [string, object, string[]][] = [
      ['empty content', { recipientId: '018f0000-0000-7000-8000-000000000001', content: '' }, ['content']],
      ['content of spaces only', { recipientId: '018f0000-0000-7000-8000-000000000001', content: '   \n ' }, ['content']],
      ['100 KB of content', { recipientId: '018f0000-0000-7000-8000-000000000001', content: 'x'.repeat(100 * 1024) }, ['content']],
      ['5,001 characters', { recipientId: '018f0000-0000-7000-8000-000000000001', content: 'x'.repeat(5001) }, ['content']],
      ['no content', { recipientId: '018f0000-0000-7000-8000-000000000001' }, ['content']],
      ['content that is not a string', { recipientId: '018f0000-0000-7000-8000-000000000001', content: 42 }, ['content']],
      ['neither conversationId nor recipientId', { content: 'hi' }, ['conversationId']],
      ['both conversationId and recipientId', { conversationId: '018f0000-0000-7000-8000-000000000002', recipientId: '018f0000-0000-7000-8000-000000000001', content: 'hi' }, ['recipientId']],
      ['a recipientId that is not an id', { recipientId: 'bob', content: 'hi' }, ['recipientId']],
      ['a conversationId that is not an id', { conversationId: 'nope', content: 'hi' }, ['conversationId']],
      ['an unknown field', { recipientId: '018f0000-0000-7000-8000-000000000001', content: 'hi', urgent: true }, ['urgent']],
    ]
    for (const [name, payload, fields] of refusals) {
      it(`refuses ${name} with 400 naming ${fields.join(', ')}`, async () => {
        expectError(await post(alice, payload), 400, 'VALIDATION_ERROR', fields)
      })
    }

    it('accepts exactly 5,000 characters', async () => {
      const { a, b } = await pair()
      expect((await post(a, { recipientId: b.user.id, content: 'y'.repeat(5000) })).statusCode).toBe(201)
    })
  })

  describe('GET /messages/conversations', () => {
    it('lists the caller’s conversations newest activity first, with the other participant, the last message and unread counts', async () => {
      const { a, b } = await pair()
      const c = await createUser(ctx)
      const withB = await sendMessage(ctx, a, { recipientId: b.user.id }, 'first to b')
      ctx.clock.advance(1000)
      const withC = await sendMessage(ctx, c, { recipientId: a.user.id }, 'c writes')
      await sendMessage(ctx, c, { recipientId: a.user.id }, 'c again')
      const response = await list(a)
      expect(response.statusCode, response.body).toBe(200)
      const { items, pagination } = response.json().data
      expect(items.map((item: { id: string }) => item.id)).toEqual([withC.conversationId, withB.conversationId])
      expect(items[0]).toEqual({
        id: withC.conversationId,
        orderId: null,
        otherParticipant: { id: c.user.id, fullName: c.user.fullName, username: c.user.username, avatar: null },
        lastMessage: expect.objectContaining({ content: 'c again', senderId: c.user.id, isRead: false }),
        unreadCount: 2,
        lastActivityAt: expect.any(String),
        createdAt: expect.any(String),
      })
      expect(items[0].otherParticipant).not.toHaveProperty('email')
      expect(items[1]).toMatchObject({ unreadCount: 0, lastMessage: { content: 'first to b', isRead: false } })
      expect(pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1, hasNext: false, hasPrev: false, nextCursor: null })
      // Bob has one unread; a stranger has none of theirs.
      expect((await list(b)).json().data.items[0]).toMatchObject({ id: withB.conversationId, unreadCount: 1 })
      expect((await list(stranger)).json().data.items.map((item: { id: string }) => item.id)).not.toContain(withB.conversationId)
    })

    it('pages by cursor and by page, the same items either way', async () => {
      const a = await createUser(ctx)
      const ids: string[] = []
      for (let index = 0; index < 5; index++) {
        const other = await createUser(ctx)
        ids.unshift((await sendMessage(ctx, other, { recipientId: a.user.id })).conversationId)
        ctx.clock.advance(1000)
      }
      const first = (await list(a, '?limit=2')).json().data
      expect(first.items.map((item: { id: string }) => item.id)).toEqual(ids.slice(0, 2))
      expect(first.pagination).toMatchObject({ total: 5, pages: 3, hasNext: true, nextCursor: expect.any(String) })
      const second = (await list(a, `?limit=2&cursor=${first.pagination.nextCursor}`)).json().data
      expect(second.items.map((item: { id: string }) => item.id)).toEqual(ids.slice(2, 4))
      expect((await list(a, '?limit=2&page=2')).json().data.items.map((item: { id: string }) => item.id)).toEqual(ids.slice(2, 4))
      const third = (await list(a, `?limit=2&cursor=${second.pagination.nextCursor}`)).json().data
      expect(third.items.map((item: { id: string }) => item.id)).toEqual(ids.slice(4))
      expect(third.pagination).toMatchObject({ hasNext: false, nextCursor: null })
    })

    it('refuses a malformed cursor, a limit over 100 and an unknown parameter with 400', async () => {
      expectError(await list(alice, '?cursor=bm90LWEtY3Vyc29y'), 400, 'VALIDATION_ERROR', ['cursor'])
      expectError(await list(alice, '?cursor=%3Cscript%3E'), 400, 'VALIDATION_ERROR', ['cursor'])
      expectError(await list(alice, '?limit=101'), 400, 'VALIDATION_ERROR', ['limit'])
      expectError(await list(alice, '?page=0'), 400, 'VALIDATION_ERROR', ['page'])
    })

    it('answers 401 without a token', async () => {
      expectError(await request(ctx.app, { method: 'GET', url: '/messages/conversations' }), 401, 'UNAUTHENTICATED')
    })
  })

  describe('GET /messages/conversations/{id}', () => {
    it('lists messages newest first (50 by default), marks the conversation read and shows the sender what was read', async () => {
      const { a, b } = await pair()
      const first = await sendMessage(ctx, a, { recipientId: b.user.id }, 'message 0')
      for (let index = 1; index < 55; index++) await sendMessage(ctx, a, { conversationId: first.conversationId }, `message ${index}`)
      const before = (await read(a, first.conversationId)).json().data
      expect(before.items).toHaveLength(50)
      expect(before.items[0]).toMatchObject({ content: 'message 54', isRead: false })
      expect(before.pagination).toEqual({ page: 1, limit: 50, total: 55, pages: 2, hasNext: true, hasPrev: false, nextCursor: expect.any(String) })

      const byBob = await read(b, first.conversationId)
      expect(byBob.statusCode, byBob.body).toBe(200)
      expect(byBob.json().data.items[49].content).toBe('message 5')
      expect((await list(b)).json().data.items[0].unreadCount).toBe(0)
      const after = (await read(a, first.conversationId)).json().data
      expect(after.items.every((item: { isRead: boolean }) => item.isRead)).toBe(true)

      const older = (await read(a, first.conversationId, `?cursor=${before.pagination.nextCursor}`)).json().data
      expect(older.items.map((item: { content: string }) => item.content)).toEqual(['message 4', 'message 3', 'message 2', 'message 1', 'message 0'])
      expect(older.pagination).toMatchObject({ page: 2, hasNext: false, hasPrev: true, nextCursor: null })
      const page2 = (await read(a, first.conversationId, '?page=2&limit=50')).json().data
      expect(page2.items.map((item: { id: string }) => item.id)).toEqual(older.items.map((item: { id: string }) => item.id))
      expect((await read(a, first.conversationId, '?page=9')).json().data.items).toEqual([])
    })

    it('keeps a cursor stable while new messages arrive', async () => {
      const { a, b } = await pair()
      const first = await sendMessage(ctx, a, { recipientId: b.user.id }, 'm1')
      for (const content of ['m2', 'm3', 'm4']) await sendMessage(ctx, a, { conversationId: first.conversationId }, content)
      const top = (await read(b, first.conversationId, '?limit=2')).json().data
      await sendMessage(ctx, a, { conversationId: first.conversationId }, 'm5')
      const next = (await read(b, first.conversationId, `?limit=2&cursor=${top.pagination.nextCursor}`)).json().data
      expect(next.items.map((item: { content: string }) => item.content)).toEqual(['m2', 'm1'])
    })

    it('answers 404 to a non-participant, for an unknown id and for a malformed id', async () => {
      const { a, b } = await pair()
      const message = await sendMessage(ctx, a, { recipientId: b.user.id })
      expectError(await read(stranger, message.conversationId), 404, 'NOT_FOUND')
      expectError(await read(a, '018f0000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND')
      expectError(await read(a, 'not-an-id'), 404, 'NOT_FOUND')
      expectError(await read(a, message.conversationId, '?cursor=abc'), 400, 'VALIDATION_ERROR', ['cursor'])
    })

    it('reads a cursor beyond the newest message as the newest page, even past the range of a 32-bit number', async () => {
      const { a, b } = await pair()
      const message = await sendMessage(ctx, a, { recipientId: b.user.id })
      const page = await read(b, message.conversationId, '?cursor=9999999999')
      expect(page.statusCode).toBe(200)
      expect(page.json().data.items.map((item: { id: string }) => item.id)).toEqual([message.id])
      expect(page.json().data.pagination).toMatchObject({ total: 1, hasNext: false, nextCursor: null })
    })
  })

  describe('POST /messages/conversations/{id}/read', () => {
    it('marks the conversation read without listing it; a stranger gets 404', async () => {
      const { a, b } = await pair()
      const message = await sendMessage(ctx, a, { recipientId: b.user.id })
      await sendMessage(ctx, a, { conversationId: message.conversationId })
      expectError(await request(ctx.app, { method: 'POST', url: `/messages/conversations/${message.conversationId}/read`, token: stranger.accessToken }), 404, 'NOT_FOUND')
      const response = await request(ctx.app, { method: 'POST', url: `/messages/conversations/${message.conversationId}/read`, token: b.accessToken })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toEqual({ conversationId: message.conversationId, unreadCount: 0 })
      expect((await list(b)).json().data.items[0].unreadCount).toBe(0)
      expect((await list(a)).json().data.items[0].lastMessage.isRead).toBe(true)
    })

    it('refuses a field it would not use (400 naming it) and marks nothing; an empty object is fine', async () => {
      const { a, b } = await pair()
      const message = await sendMessage(ctx, a, { recipientId: b.user.id })
      const path = `/messages/conversations/${message.conversationId}/read`
      expectError(await request(ctx.app, { method: 'POST', url: path, token: b.accessToken, payload: { upTo: message.id } }), 400, 'VALIDATION_ERROR', ['upTo'])
      expect((await list(b)).json().data.items[0].unreadCount).toBe(1)
      expect((await request(ctx.app, { method: 'POST', url: path, token: b.accessToken, payload: {} })).statusCode).toBe(200)
      expect((await list(b)).json().data.items[0].unreadCount).toBe(0)
    })
  })

  describe('POST /messages/files', () => {
    const upload = (user: TestUser, parts: { conversationId?: string; content: Buffer; filename?: string }) => {
      const form = fileForm(parts.content, { filename: parts.filename ?? 'notes.bin' })
      const withConversation = parts.conversationId
        ? { payload: Buffer.concat([Buffer.from(`--${form.headers['content-type']!.split('boundary=')[1]}\r\nContent-Disposition: form-data; name="conversationId"\r\n\r\n${parts.conversationId}\r\n`), form.payload]), headers: form.headers }
        : form
      return request(ctx.app, { method: 'POST', url: '/messages/files', token: user.accessToken, ...withConversation })
    }

    it('sends a file as a message, private to the participants, with a signed link', async () => {
      const { a, b } = await pair()
      const message = await sendMessage(ctx, a, { recipientId: b.user.id })
      const image = await png()
      const response = await upload(a, { conversationId: message.conversationId, content: image, filename: 'photo.png' })
      expect(response.statusCode, response.body).toBe(201)
      const sent = response.json().data
      expect(sent).toMatchObject({ conversationId: message.conversationId, senderId: a.user.id, content: '', attachment: { filename: 'photo.png', mimetype: 'image/png', url: expect.stringMatching(/\?expires=\d+&signature=/) } })
      const path = new URL(sent.attachment.url).pathname.replace('/api/v1', '')
      // The signed link works without a token; the bare path works for the participants only.
      expect((await request(ctx.app, { method: 'GET', url: `${path}${new URL(sent.attachment.url).search}` })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'GET', url: path, token: b.accessToken })).statusCode).toBe(200)
      expectError(await request(ctx.app, { method: 'GET', url: path, token: stranger.accessToken }), 404, 'NOT_FOUND')
      expectError(await request(ctx.app, { method: 'GET', url: path }), 404, 'NOT_FOUND')
      // A page holding a file and a text message: the file's signed link on the one, null on the other.
      const [listed, text] = (await read(b, message.conversationId)).json().data.items
      expect(listed.attachment).toMatchObject({ id: sent.attachment.id, filename: 'photo.png', url: expect.stringMatching(/\?expires=\d+&signature=/) })
      expect(text).toMatchObject({ id: message.id, attachment: null })
    })

    it('refuses a file over 10 MB with 400 on file, and a missing conversationId with 400 on conversationId', async () => {
      const { a, b } = await pair()
      const message = await sendMessage(ctx, a, { recipientId: b.user.id })
      expectError(await upload(a, { conversationId: message.conversationId, content: opaqueBytes(10 * MB + 1) }), 400, 'VALIDATION_ERROR', ['file'])
      expectError(await upload(a, { content: opaqueBytes(100) }), 400, 'VALIDATION_ERROR', ['conversationId'])
      expectError(await upload(a, { conversationId: 'nope', content: opaqueBytes(100) }), 400, 'VALIDATION_ERROR', ['conversationId'])
      expect(await ctx.database.db.select().from(messages).where(eq(messages.conversationId, message.conversationId))).toHaveLength(1)
    })

    it("answers 404 for another pair's conversation and stores nothing", async () => {
      const { a, b } = await pair()
      const message = await sendMessage(ctx, a, { recipientId: b.user.id })
      expectError(await upload(stranger, { conversationId: message.conversationId, content: opaqueBytes(100) }), 404, 'NOT_FOUND')
      expect(await ctx.database.db.select().from(messages).where(eq(messages.conversationId, message.conversationId))).toHaveLength(1)
    })
  })

  describe('e-mail to a recipient with no open socket', () => {
    it('e-mails at once, then at most once per conversation per 15 minutes', async () => {
      const { a, b } = await pair()
      const first = await sendMessage(ctx, a, { recipientId: b.user.id }, 'Are you there?')
      expect(await mailJobs(first.id)).toHaveLength(1)
      const second = await sendMessage(ctx, a, { conversationId: first.conversationId })
      expect(await mailJobs(second.id)).toHaveLength(0)
      ctx.clock.advance(14 * 60_000)
      expect(await mailJobs((await sendMessage(ctx, await fresh(a), { conversationId: first.conversationId })).id)).toHaveLength(0)
      ctx.clock.advance(60_000)
      expect(await mailJobs((await sendMessage(ctx, await fresh(a), { conversationId: first.conversationId })).id)).toHaveLength(1)
      // The sender, who wrote last, is e-mailed separately about replies.
      expect(await mailJobs((await sendMessage(ctx, await fresh(b), { conversationId: first.conversationId })).id)).toHaveLength(1)
    })

    it('sends the e-mail through the worker, with the sender, a preview and a link; not if read meanwhile', async () => {
      const { a, b } = await pair()
      const first = await sendMessage(ctx, a, { recipientId: b.user.id }, 'Quick question about the logo')
      await drainOutbox()
      const mail = ctx.mailer.sent.find((candidate) => candidate.to === b.user.email)
      expect(mail).toMatchObject({ subject: `New message from ${a.user.fullName}` })
      expect(mail!.text).toContain('Quick question about the logo')
      expect(ctx.mailer.linkTo(b.user.email)).toBe(`http://app.test/messages/${first.conversationId}`)

      const { a: c, b: d } = await pair()
      await sendMessage(ctx, c, { recipientId: d.user.id }, 'read before the worker runs')
      await read(d, (await list(d)).json().data.items[0].id)
      await drainOutbox()
      expect(ctx.mailer.sent.filter((candidate) => candidate.to === d.user.email)).toEqual([])
    })
  })
})
