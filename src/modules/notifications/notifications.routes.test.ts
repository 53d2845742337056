import { isNull } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { SECOND } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { settableKinds } from './notification-kinds.ts'
import { notifications } from './notifications.table.ts'

interface Item {
  id: string
  kind: string
  readAt: string | null
  createdAt: string
}

describe('notifications over HTTP', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  /** `count` notifications for the user, one second apart (the newest last), through the module's API. */
  async function notifyMany(user: TestUser, count: number): Promise<void> {
    for (let n = 0; n < count; n++) {
      ctx.clock.advance(SECOND)
      await ctx.database.db.transaction((tx) =>
        ctx.app.container.notifications.notify(tx, { userId: user.user.id, kind: 'payout.processed', link: { type: 'payout', id: newId() }, data: { amount: n + 1 } }),
      )
    }
  }
  const list = (user: TestUser, query = '') => request(ctx.app, { method: 'GET', url: `/notifications${query}`, token: user.accessToken })
  const markRead = (user: TestUser, payload: object) => request(ctx.app, { method: 'POST', url: '/notifications/read', token: user.accessToken, payload })
  const unreadOf = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/users/me', token: user.accessToken })).json().data.unreadNotifications as number

  it('answers 401 to anonymous callers on every route', async () => {
    expectError(await request(ctx.app, { method: 'GET', url: '/notifications' }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'POST', url: '/notifications/read', payload: { all: true } }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'GET', url: '/users/me/notification-settings' }), 401, 'UNAUTHENTICATED')
    expectError(await request(ctx.app, { method: 'PUT', url: '/users/me/notification-settings', payload: { email: { 'order.placed': true } } }), 401, 'UNAUTHENTICATED')
  })

  describe('GET /notifications', () => {
    it('lists the caller’s own notifications newest first, by page, with the totals', async () => {
      const user = await createUser(ctx)
      const other = await createUser(ctx)
      await notifyMany(user, 5)
      await notifyMany(other, 2)
      const first = await list(user, '?limit=2')
      expect(first.statusCode, first.body).toBe(200)
      const page = first.json().data
      expect(page.items.map((item: Item) => item.createdAt)).toEqual([ctx.clock.now().getTime() - 2 * SECOND, ctx.clock.now().getTime() - 3 * SECOND].map((ms) => new Date(ms).toISOString()))
      expect(page.items[0]).toEqual({
        id: expect.any(String),
        kind: 'payout.processed',
        title: 'Payout sent',
        body: 'Your payout of 5.00 USD was sent.',
        link: { type: 'payout', id: expect.any(String) },
        readAt: null,
        createdAt: expect.any(String),
      })
      expect(page.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3, hasNext: true, hasPrev: false, nextCursor: expect.any(String) })
      const third = (await list(user, '?limit=2&page=3')).json().data
      expect(third.items).toHaveLength(1)
      expect(third.pagination).toMatchObject({ page: 3, hasNext: false, hasPrev: true, nextCursor: null })
    })

    it('walks every notification once with the cursor, even while new ones arrive', async () => {
      const user = await createUser(ctx)
      await notifyMany(user, 5)
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const response = await list(user, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        expect(response.statusCode, response.body).toBe(200)
        const page = response.json().data as { items: Item[]; pagination: { nextCursor: string | null; page: number; hasPrev: boolean } }
        seen.push(...page.items.map((item) => item.id))
        if (cursor) expect(page.pagination).toMatchObject({ page: 1, hasPrev: true })
        cursor = page.pagination.nextCursor
        if (pages++ === 0) await notifyMany(user, 1)
      } while (cursor)
      expect(seen).toHaveLength(5)
      expect(new Set(seen).size).toBe(5)
    })

    it('keeps only the unread ones with unread=true, and all with unread=false', async () => {
      const user = await createUser(ctx)
      await notifyMany(user, 3)
      const [newest] = (await list(user)).json().data.items as Item[]
      expect((await markRead(user, { ids: [newest!.id] })).statusCode).toBe(200)
      const unread = (await list(user, '?unread=true')).json().data
      expect(unread.items.map((item: Item) => item.readAt)).toEqual([null, null])
      expect(unread.pagination.total).toBe(2)
      expect((await list(user, '?unread=false')).json().data.pagination.total).toBe(3)
    })

    it('refuses unknown filter values, unknown parameters and foreign cursors with 400 on the parameter', async () => {
      const user = await createUser(ctx)
      expectError(await list(user, '?unread=maybe'), 400, 'VALIDATION_ERROR', ['unread'])
      expectError(await list(user, '?kind=order.placed'), 400, 'VALIDATION_ERROR', ['kind'])
      expectError(await list(user, '?limit=101'), 400, 'VALIDATION_ERROR', ['limit'])
      expectError(await list(user, '?cursor=bm90LWEtY3Vyc29y'), 400, 'VALIDATION_ERROR', ['cursor'])
      expectError(await list(user, '?cursor=%2F%2F'), 400, 'VALIDATION_ERROR', ['cursor'])
    })
  })

  describe('POST /notifications/read', () => {
    it('marks the given ones read, answers how many changed and how many are left, and counts once', async () => {
      const user = await createUser(ctx)
      await notifyMany(user, 3)
      expect(await unreadOf(user)).toBe(3)
      const items = (await list(user)).json().data.items as Item[]
      const first = await markRead(user, { ids: [items[0]!.id, items[1]!.id, items[1]!.id.toUpperCase()] })
      expect(first.statusCode, first.body).toBe(200)
      expect(first.json().data).toEqual({ updated: 2, unread: 1 })
      expect((await markRead(user, { ids: [items[0]!.id] })).json().data).toEqual({ updated: 0, unread: 1 })
      expect(await unreadOf(user)).toBe(1)
      const after = (await list(user)).json().data.items as Item[]
      expect(after.map((item) => item.readAt)).toEqual([ctx.clock.now().toISOString(), ctx.clock.now().toISOString(), null])
    })

    it('marks all of the caller’s notifications read, and nobody else’s', async () => {
      const user = await createUser(ctx)
      const other = await createUser(ctx)
      await notifyMany(user, 3)
      await notifyMany(other, 2)
      expect((await markRead(user, { all: true })).json().data).toEqual({ updated: 3, unread: 0 })
      expect(await unreadOf(user)).toBe(0)
      expect(await unreadOf(other)).toBe(2)
    })

    it('answers 404 for a stranger’s id or an unknown one, and marks nothing, not even the caller’s own ids sent with it', async () => {
      const user = await createUser(ctx)
      const stranger = await createUser(ctx)
      await notifyMany(user, 1)
      await notifyMany(stranger, 1)
      const [mine] = (await list(user)).json().data.items as Item[]
      const [theirs] = (await list(stranger)).json().data.items as Item[]
      expectError(await markRead(user, { ids: [mine!.id, theirs!.id] }), 404, 'NOT_FOUND')
      expectError(await markRead(user, { ids: [newId()] }), 404, 'NOT_FOUND')
      const unread = await ctx.database.db.select({ id: notifications.id }).from(notifications).where(isNull(notifications.readAt))
      expect(unread.map((row) => row.id)).toEqual(expect.arrayContaining([mine!.id, theirs!.id]))
      expect(await unreadOf(user)).toBe(1)
      expect(await unreadOf(stranger)).toBe(1)
    })

    it('takes exactly one of ids and all (400 on the field otherwise), at most 100 ids', async () => {
      const user = await createUser(ctx)
      expectError(await markRead(user, {}), 400, 'VALIDATION_ERROR', ['ids'])
      expectError(await markRead(user, { ids: [newId()], all: true }), 400, 'VALIDATION_ERROR', ['all'])
      expectError(await markRead(user, { all: false }), 400, 'VALIDATION_ERROR', ['all'])
      expectError(await markRead(user, { ids: [] }), 400, 'VALIDATION_ERROR', ['ids'])
      expectError(await markRead(user, { ids: Array.from({ length: 101 }, () => newId()) }), 400, 'VALIDATION_ERROR', ['ids'])
      expectError(await markRead(user, { ids: ['not-an-id'] }), 400, 'VALIDATION_ERROR', ['ids.0'])
      expectError(await markRead(user, { all: true, everything: true }), 400, 'VALIDATION_ERROR', ['everything'])
    })
  })

  describe('notification settings', () => {
    const getSettings = (user: TestUser) => request(ctx.app, { method: 'GET', url: '/users/me/notification-settings', token: user.accessToken })
    const putSettings = (user: TestUser, payload: object) => request(ctx.app, { method: 'PUT', url: '/users/me/notification-settings', token: user.accessToken, payload })

    it('answers every settable kind with its default: on for the kinds that had their own e-mail, off for the others; security e-mails are not listed', async () => {
      const user = await createUser(ctx)
      const response = await getSettings(user)
      expect(response.statusCode, response.body).toBe(200)
      const { email } = response.json().data as { email: Record<string, boolean> }
      expect(Object.keys(email).sort()).toEqual([...settableKinds].sort())
      expect(email).toMatchObject({ 'message.received': true, 'offer.received': true, 'order.resolved': true, 'kyc.rejected': true, 'order.delivered': false, 'payout.processed': false })
      expect(email).not.toHaveProperty('account.suspended')
    })

    it('changes only the kinds named, keeps them across calls, and leaves other people’s settings alone', async () => {
      const user = await createUser(ctx)
      const other = await createUser(ctx)
      const first = await putSettings(user, { email: { 'message.received': false, 'order.delivered': true } })
      expect(first.statusCode, first.body).toBe(200)
      expect(first.json().data.email).toMatchObject({ 'message.received': false, 'order.delivered': true, 'offer.received': true })
      const second = await putSettings(user, { email: { 'order.delivered': false, 'payout.processed': true } })
      expect(second.json().data.email).toMatchObject({ 'message.received': false, 'order.delivered': false, 'payout.processed': true })
      expect((await getSettings(user)).json().data).toEqual(second.json().data)
      expect((await getSettings(other)).json().data.email).toMatchObject({ 'message.received': true, 'order.delivered': false, 'payout.processed': false })
    })

    it('refuses security e-mails, unknown kinds and values that are not booleans with 400 on the field', async () => {
      const user = await createUser(ctx)
      expectError(await putSettings(user, { email: { 'account.suspended': false } }), 400, 'VALIDATION_ERROR', ['email.account.suspended'])
      expectError(await putSettings(user, { email: { 'account.activation': false } }), 400, 'VALIDATION_ERROR', ['email.account.activation'])
      expectError(await putSettings(user, { email: { 'order.teleported': true } }), 400, 'VALIDATION_ERROR', ['email.order.teleported'])
      expectError(await putSettings(user, { email: { 'message.received': 'no' } }), 400, 'VALIDATION_ERROR', ['email.message.received'])
      expectError(await putSettings(user, { email: {} }), 400, 'VALIDATION_ERROR', ['email'])
      expectError(await putSettings(user, {}), 400, 'VALIDATION_ERROR', ['email'])
      expectError(await putSettings(user, { email: { 'order.placed': true }, push: {} }), 400, 'VALIDATION_ERROR', ['push'])
      expect((await getSettings(user)).json().data.email['message.received']).toBe(true)
    })
  })
})
