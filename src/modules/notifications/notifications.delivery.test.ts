import { count, eq, lt } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { submitKyc } from '../../../test/factories/kyc.ts'
import { sendMessage } from '../../../test/factories/messages.ts'
import { makeOffer, offerParties } from '../../../test/factories/offers.ts'
import { createActiveService, moveOrder, placeOrder } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { listen, openSocket, type TestSocket } from '../../../test/setup/sockets.ts'
import { twoInstances } from '../../../test/setup/instances.ts'
import { createTestApp, request, TEST_REDIS_URL, type TestContext } from '../../../test/setup/test-app.ts'
import { DAY, HOUR, SECOND } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { settableKinds } from './notification-kinds.ts'
import { notifications } from './notifications.table.ts'

const inbox = async (ctx: TestContext, user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/notifications', token: user.accessToken })).json().data.items as { id: string; kind: string }[]
const putEmail = async (ctx: TestContext, user: TestUser, email: Record<string, boolean>) => {
  const response = await request(ctx.app, { method: 'PUT', url: '/users/me/notification-settings', token: user.accessToken, payload: { email } })
  expect(response.statusCode, response.body).toBe(200)
}
const mailTo = (ctx: TestContext, user: TestUser) => ctx.mailer.sent.filter((mail) => mail.to === user.user.email)

describe('delivery of notifications: sockets and e-mail', () => {
  let ctx: TestContext
  let url: string
  let staff: TestUser
  const sockets: TestSocket[] = []
  beforeAll(async () => {
    ctx = await createTestApp({ env: { WS_HEARTBEAT_SECONDS: '3600' } })
    url = await listen(ctx.app)
    staff = await createUser(ctx, { permissions: ['view_kyc', 'manage_kyc', 'view_users', 'manage_users', 'view_orders', 'resolve_disputes'] })
  })
  afterAll(async () => {
    for (const socket of sockets) socket.close()
    await ctx.close()
  })
  const open = async (user: TestUser) => {
    const socket = await openSocket(url, { header: user.accessToken })
    sockets.push(socket)
    return socket
  }
  const frames = (socket: TestSocket) => socket.frames.filter((frame) => frame.type === 'notification')

  it('pushes each new notification, as the list shows it, to every socket of its person after the commit, and to nobody else', async () => {
    const seller = await createUser(ctx)
    const stranger = await createUser(ctx)
    const [phone, laptop, strangers] = [await open(seller), await open(seller), await open(stranger)]
    const { orderId } = await placeOrder(ctx, { service: await createActiveService(ctx, seller) })
    // Nothing is pushed before the worker runs the job the transaction wrote.
    expect(frames(phone)).toEqual([])
    await ctx.app.container.worker.drain()
    const listed = (await inbox(ctx, seller)).find((item) => item.kind === 'order.placed')!
    for (const socket of [phone, laptop]) {
      const frame = await socket.next((candidate) => candidate.type === 'notification' && candidate.data.id === listed.id)
      expect(frame.data).toEqual(listed)
      expect(frame.data).toMatchObject({ link: { type: 'order', id: orderId } })
    }
    expect(frames(strangers)).toEqual([])
  })

  it('notifies a recipient away from a new message once per burst, and not one with a socket open', async () => {
    const alice = await createUser(ctx)
    const bob = await createUser(ctx)
    const carol = await createUser(ctx)
    const first = await sendMessage(ctx, alice, { recipientId: bob.user.id }, 'Hello Bob, are you free next week?')
    await sendMessage(ctx, alice, { recipientId: bob.user.id }, 'Another thing')
    const items = await request(ctx.app, { method: 'GET', url: '/notifications', token: bob.accessToken })
    expect(items.json().data.items).toMatchObject([{ kind: 'message.received', title: 'New message', body: 'Hello Bob, are you free next week?', link: { type: 'conversation', id: first.conversationId } }])
    await open(carol)
    await sendMessage(ctx, alice, { recipientId: carol.user.id }, 'Carol is online')
    expect(await inbox(ctx, carol)).toEqual([])
    expect(await inbox(ctx, alice)).toEqual([])
  })

  describe('e-mail', () => {
    it('sends no e-mail for a kind without its own by default, and a generic one once the person switches it on', async () => {
      const placed = await placeOrder(ctx)
      await ctx.app.container.worker.drain()
      const before = mailTo(ctx, placed.seller).length
      const second = await placeOrder(ctx, { service: { ...placed } })
      await ctx.app.container.worker.drain()
      expect(mailTo(ctx, second.seller)).toHaveLength(before)

      await putEmail(ctx, placed.seller, { 'order.placed': true })
      const third = await placeOrder(ctx, { service: { ...placed } })
      await ctx.app.container.worker.drain()
      const mails = mailTo(ctx, placed.seller).slice(before)
      expect(mails).toHaveLength(1)
      expect(mails[0]).toMatchObject({ subject: 'New order' })
      expect(mails[0]!.text).toContain('A buyer placed an order: 100.00 USD is in escrow.')
      expect(mails[0]!.text).toContain(`http://app.test/orders/${third.orderId}`)
      expect(mails[0]!.text).toContain('notification settings')
      expect(mails[0]!.html).toContain('<p>A buyer placed an order: 100.00 USD is in escrow.</p>')
    })

    it('sends the e-mails of messages, offers, dispute splits and identity decisions by default, and none of them once switched off', async () => {
      const quiet = await createUser(ctx)
      const loud = await createUser(ctx)
      await putEmail(ctx, quiet, { 'message.received': false, 'offer.received': false, 'kyc.approved': false })
      const writer = await createUser(ctx)
      await sendMessage(ctx, writer, { recipientId: quiet.user.id }, 'Hi')
      await sendMessage(ctx, writer, { recipientId: loud.user.id }, 'Hi')
      for (const user of [quiet, loud]) {
        const submission = await submitKyc(ctx.app, user.accessToken)
        expect((await request(ctx.app, { method: 'POST', url: `/admin/kyc/${submission}/approve`, token: staff.accessToken })).statusCode).toBe(200)
      }
      await ctx.app.container.worker.drain()
      expect(mailTo(ctx, quiet).map((mail) => mail.subject)).toEqual([])
      expect(mailTo(ctx, loud).map((mail) => mail.subject).sort()).toEqual([`New message from ${writer.user.fullName}`, 'Your identity is verified'])
      // The notifications themselves are there either way.
      expect((await inbox(ctx, quiet)).map((item) => item.kind).sort()).toEqual(['kyc.approved', 'message.received'])

      const parties = await offerParties(ctx)
      await putEmail(ctx, parties.buyer, { 'offer.received': false })
      await makeOffer(ctx, parties)
      await ctx.app.container.worker.drain()
      expect(mailTo(ctx, parties.buyer).filter((mail) => mail.subject.includes('custom offer'))).toEqual([])

      const disputed = await placeOrder(ctx)
      await moveOrder(ctx, disputed.seller.accessToken, disputed.orderId, 'in_progress')
      await moveOrder(ctx, disputed.buyer.accessToken, disputed.orderId, 'disputed', 'Nothing arrived')
      await putEmail(ctx, disputed.buyer, { 'order.resolved': false })
      const resolved = await request(ctx.app, { method: 'POST', url: `/admin/orders/${disputed.orderId}/resolve`, token: staff.accessToken, payload: { refundAmount: 50, note: 'Half was done.' } })
      expect(resolved.statusCode, resolved.body).toBe(200)
      await ctx.app.container.worker.drain()
      expect(mailTo(ctx, disputed.buyer).filter((mail) => mail.subject.startsWith('Dispute resolved'))).toEqual([])
      expect(mailTo(ctx, disputed.seller).filter((mail) => mail.subject.startsWith('Dispute resolved'))).toHaveLength(1)
    })

    it('always sends the security e-mails, whatever the settings say: suspension, its end, and a password reset', async () => {
      const user = await createUser(ctx)
      await putEmail(ctx, user, Object.fromEntries(settableKinds.map((kind) => [kind, false])))
      expect((await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/suspend`, token: staff.accessToken, payload: { reason: 'Spam' } })).statusCode).toBe(200)
      await ctx.app.container.worker.drain()
      expect(mailTo(ctx, user).map((mail) => mail.subject)).toEqual(['Account suspended'])
      expect(mailTo(ctx, user)[0]!.text).not.toContain('Spam')
      expect((await request(ctx.app, { method: 'POST', url: `/admin/users/${user.user.id}/unsuspend`, token: staff.accessToken })).statusCode).toBe(200)
      expect((await request(ctx.app, { method: 'POST', url: '/auth/forgot-password', payload: { email: user.user.email } })).statusCode).toBe(200)
      await ctx.app.container.worker.drain()
      expect(mailTo(ctx, user).map((mail) => mail.subject).sort()).toEqual(['Account suspended', 'Reset your password', 'Suspension ended'])
    })
  })
})

describe('retention', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { NOTIFICATION_RETENTION_DAYS: '0.5', WORKER_TICK_SECONDS: '5' } })
  })
  afterAll(() => ctx.close())

  it('deletes notifications older than NOTIFICATION_RETENTION_DAYS (fractions allowed) in batches, every worker tick, and keeps the younger ones', async () => {
    const user = await createUser(ctx)
    const { db } = ctx.database
    const at = (ms: number) => new Date(ctx.clock.now().getTime() - ms)
    const row = (createdAt: Date) => ({ id: newId(), userId: user.user.id, kind: 'payout.processed', linkType: 'payout', linkId: newId(), data: { amount: 1 }, readAt: null, createdAt })
    // 2,500 past the half day (more than two batches), and some younger.
    for (let batch = 0; batch < 5; batch++) await db.insert(notifications).values(Array.from({ length: 500 }, () => row(at(13 * HOUR))))
    await db.insert(notifications).values([row(at(11 * HOUR)), row(at(HOUR)), row(at(0))])
    const { worker } = ctx.app.container
    expect(await worker.runPeriodic()).toContain('purge-old-notifications')
    const left = await db.select({ createdAt: notifications.createdAt }).from(notifications).where(eq(notifications.userId, user.user.id))
    expect(left.map((kept) => kept.createdAt.getTime()).sort()).toEqual([at(11 * HOUR), at(HOUR), at(0)].map((date) => date.getTime()).sort())

    ctx.clock.advance(2 * SECOND)
    expect(await worker.runPeriodic()).not.toContain('purge-old-notifications')
    ctx.clock.advance(3 * SECOND + 2 * HOUR)
    expect(await worker.runPeriodic()).toContain('purge-old-notifications')
    const [{ total }] = (await db.select({ total: count() }).from(notifications).where(lt(notifications.createdAt, new Date(ctx.clock.now().getTime() - DAY / 2)))) as [{ total: number }]
    expect(total).toBe(0)
    expect(await db.select().from(notifications).where(eq(notifications.userId, user.user.id))).toHaveLength(2)
  })
})

// PostgreSQL and Redis only: two API instances share one database and one Redis, as behind a load balancer.
describe.runIf(inject('pgTemplate') && TEST_REDIS_URL)('a notification across two instances on one PostgreSQL and Redis', () => {
  const instances = twoInstances({ REDIS_URL: TEST_REDIS_URL, WS_HEARTBEAT_SECONDS: '3600' }, { listen: true })

  it('pushes a notification written through instance 1, by instance 1’s worker, to the person’s socket on instance 2 only', async () => {
    expect(instances.first.app.container.realtime.kind).toBe('redis')
    const seller = await createUser(instances.first)
    const stranger = await createUser(instances.first)
    const socket = await openSocket(instances.secondUrl, { header: seller.accessToken })
    const other = await openSocket(instances.secondUrl, { header: stranger.accessToken })
    const { orderId } = await placeOrder(instances.first, { service: await createActiveService(instances.first, seller) })
    await instances.first.app.container.worker.drain()
    const frame = await socket.next((candidate) => candidate.type === 'notification' && candidate.data.kind === 'order.placed')
    const listed = (await inbox(instances.second, seller)).find((item) => item.kind === 'order.placed')
    expect(frame.data).toEqual(listed)
    expect(frame.data).toMatchObject({ link: { type: 'order', id: orderId } })
    expect(other.frames.filter((candidate) => candidate.type === 'notification')).toEqual([])
    socket.close()
    other.close()
  })
})
