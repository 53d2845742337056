import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_DIST } from '../../src/http/console.ts'
import { DAY } from '../../src/lib/clock.ts'
import { seedDemo } from '../../src/seed/demo.ts'
import { orderIn, type PlacedOrder } from '../factories/orders.ts'
import { passKyc, submitKyc } from '../factories/kyc.ts'
import { sendMessage } from '../factories/messages.ts'
import { createCategory, publishService } from '../factories/services.ts'
import { createUser, DEFAULT_PASSWORD, type TestUser } from '../factories/users.ts'
import { createTestApp, request, type TestContext } from '../setup/test-app.ts'

const ROOT = new URL('../..', import.meta.url).pathname
const SCREENSHOTS = join(ROOT, '.tmp', 'console-screenshots')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const AXE_SOURCE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8')

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

describe('the operator console in a browser', () => {
  let ctx: TestContext
  let base: string
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let admin: TestUser
  let pendingServiceTitle: string
  let kycUser: TestUser
  let dispute: PlacedOrder
  let staffMember: TestUser
  const policyViolations: string[] = []

  /** axe-core on the page as it stands: no serious or critical violation. */
  async function expectAccessible(name: string) {
    await page.evaluate(AXE_SOURCE)
    // A string: it runs in the page, where axe is now defined.
    const violations = await page.evaluate<string[]>(`axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => violation.id + ': ' + violation.help + ' at ' + violation.nodes.map((node) => node.target.join(' ')).join(', ')))`)
    expect(violations, `${name}: accessibility`).toEqual([])
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
  }

  async function open(path: string, heading: string | RegExp) {
    await page.goto(`${base}/console${path}`)
    await page.getByRole('heading', { level: 1, name: heading }).waitFor()
  }

  async function signIn(target: Page, email: string) {
    await target.getByLabel('E-mail').fill(email)
    await target.getByLabel('Password').fill(DEFAULT_PASSWORD)
    await target.getByRole('button', { name: 'Sign in' }).click()
    await target.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor()
  }

  const newPage = async (into: BrowserContext) => {
    const created = await into.newPage()
    created.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) policyViolations.push(message.text())
    })
    return created
  }

  beforeAll(async () => {
    if (!existsSync(join(CONSOLE_DIST, 'index.html'))) throw new Error('the console is not built: npm run console:build')
    mkdirSync(SCREENSHOTS, { recursive: true })
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    ctx = await createTestApp({ env: { PUBLIC_URL: base } })
    await seedDemo({ db: ctx.database.db, clock: ctx.clock, container: ctx.app.container, tmpDir: ctx.config.tmpDir })
    // Orders over the last two weeks, some completed (platform revenue), so the charts have a shape.
    const now = ctx.clock.now()
    for (const daysAgo of [13, 12, 10, 9, 9, 7, 5, 4, 4, 2, 1]) {
      ctx.clock.set(new Date(now.getTime() - daysAgo * DAY))
      await orderIn(ctx, daysAgo % 3 === 0 ? 'pending' : 'completed')
    }
    ctx.clock.set(now)

    admin = await createUser(ctx, { isStaff: true, isSuperuser: true, fullName: 'Olivia Operator' })
    // A service waiting for moderation, a KYC submission waiting for review, a payout waiting
    // for approval and an order in dispute, each made through the API as its user would.
    const seller = await createUser(ctx, { fullName: 'Wren Moderated' })
    pendingServiceTitle = 'I will paint a mural for your café'
    await publishService(ctx, seller.accessToken, await createCategory(ctx), { title: pendingServiceTitle })
    kycUser = await createUser(ctx, { fullName: 'Ada Lovelace' })
    await submitKyc(ctx.app, kycUser.accessToken)
    const payee = await createUser(ctx, { fullName: 'Paula Payee' })
    await passKyc(ctx.app, payee.accessToken, admin.accessToken)
    expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: payee.accessToken, payload: { amount: 150 } })).statusCode).toBe(201)
    const payout = await request(ctx.app, { method: 'POST', url: '/wallet/payout', token: payee.accessToken, payload: { amount: 120, method: 'paypal', details: { email: 'paula@example.test' } } })
    expect(payout.statusCode, payout.body).toBe(201)
    dispute = await orderIn(ctx, 'disputed')
    staffMember = await createUser(ctx, { fullName: 'Sam Support', permissions: ['view_users', 'view_orders'] })

    await ctx.app.listen({ port, host: '127.0.0.1' })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    page = await newPage(context)
  })

  afterAll(async () => {
    await browser?.close()
    await ctx?.close()
  })

  it('signs in with e-mail and password and opens on the dashboard, its figures and charts', async () => {
    await page.goto(`${base}/console/`)
    await page.getByRole('heading', { name: 'Marketplace console' }).waitFor()
    await expectAccessible('sign-in')
    await page.getByLabel('E-mail').fill(admin.user.email)
    await page.getByLabel('Password').fill('wrong password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/password/i)
    await signIn(page, admin.user.email)
    await page.getByRole('heading', { name: 'Users', level: 2 }).waitFor()
    await expect.poll(() => page.getByRole('figure').filter({ hasText: 'Orders placed' }).locator('figcaption').textContent()).toBe('Orders placed: 12 over 30 days')
    await page.getByText('Platform revenue:').waitFor()
    await expectAccessible('dashboard')
    if (process.env.CONSOLE_DOCS_SCREENSHOT) await page.screenshot({ path: join(ROOT, 'docs', 'console-dashboard.png') })
  })

  it('approves a service waiting for moderation, shown as a buyer would see it', async () => {
    await open('/moderation', 'Moderation')
    const card = page.getByRole('article', { name: pendingServiceTitle })
    await card.waitFor()
    await expectAccessible('moderation')
    await card.getByRole('button', { name: 'Approve' }).click()
    await card.waitFor({ state: 'detached' })
    const services = await request(ctx.app, { method: 'GET', url: '/admin/services?status=active&limit=100', token: admin.accessToken })
    expect(services.json().data.items.some((service: { title: string }) => service.title === pendingServiceTitle)).toBe(true)
  })

  it('approves a KYC submission with its documents in the page', async () => {
    await open('/kyc', 'KYC')
    await page.getByRole('link', { name: 'Ada Lovelace' }).click()
    await page.getByRole('heading', { level: 1, name: 'Ada Lovelace' }).waitFor()
    for (const side of ['front', 'back', 'selfie']) {
      const image = page.getByRole('img', { name: `${side} of the document` })
      await image.waitFor()
      await expect
        .poll(() =>
          image.evaluate((element) => {
            const shown = element as unknown as { complete: boolean; naturalWidth: number }
            return shown.complete && shown.naturalWidth > 0
          }),
        )
        .toBe(true)
    }
    await expectAccessible('kyc-submission')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.getByRole('heading', { level: 1, name: 'KYC' }).waitFor()
    await expectAccessible('kyc')
    const me = await request(ctx.app, { method: 'GET', url: '/users/me', token: kycUser.accessToken })
    expect(me.json().data.isKYCVerified).toBe(true)

    // The person's page lists their KYC history with the decision.
    await open(`/users/${kycUser.user.id}`, 'Ada Lovelace')
    const kyc = page.getByRole('row').filter({ hasText: 'id card' })
    await kyc.getByText('approved').waitFor()
    await expectAccessible('user-kyc')
  })

  it('approves a payout, and checks the ledger', async () => {
    await open('/payouts', 'Payouts')
    const row = page.getByRole('row', { name: /paula@example\.test/ })
    await row.waitFor()
    await expectAccessible('payouts')
    await row.getByRole('button', { name: 'Approve' }).click()
    await row.waitFor({ state: 'detached' })
    const processed = await request(ctx.app, { method: 'GET', url: '/admin/payouts?status=processed', token: admin.accessToken })
    expect(processed.json().data.items).toHaveLength(1)
    await page.getByRole('button', { name: 'Check the ledger' }).click()
    await expect.poll(() => page.getByRole('status').last().textContent()).toMatch(/The books balance/)
  })

  it('resolves a dispute all or nothing: the buyer is refunded in full', async () => {
    const walletOf = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number }
    const before = await walletOf(dispute.buyer)
    await open('/orders', 'Orders and disputes')
    const item = page.getByRole('listitem').filter({ hasText: dispute.order.serviceTitle as string })
    await sendMessage(ctx, dispute.buyer, { conversationId: dispute.order.conversationId as string }, 'Nothing arrived by the due date.')
    await item.getByText(/disputed/).first().click()
    // The order's conversation is shown read-only beside the timeline.
    await item.getByRole('region', { name: 'Conversation' }).getByText('Nothing arrived by the due date.').waitFor()
    await expectAccessible('orders')
    await item.getByRole('button', { name: 'Refund the buyer in full…' }).click()
    await item.getByLabel('Reason').fill('The seller did not deliver what was agreed.')
    await item.getByRole('button', { name: 'Refund the buyer in full', exact: true }).click()
    await item.waitFor({ state: 'detached' })
    const order = await request(ctx.app, { method: 'GET', url: `/orders/${dispute.orderId}`, token: dispute.buyer.accessToken })
    expect(order.json().data.status).toBe('cancelled')
    const after = await walletOf(dispute.buyer)
    expect(after.balance - before.balance).toBeCloseTo(dispute.order.total, 2)
    expect(after.escrow).toBe(before.escrow - dispute.order.total)
  })

  it('resolves a dispute with a split: the buyer gets the refund, the seller the rest less the fee on it', async () => {
    // Made now, so it is the only order in dispute on the page (they share the factory's title).
    const split = await orderIn(ctx, 'disputed')
    const walletOf = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number }
    const [buyerBefore, sellerBefore] = [await walletOf(split.buyer), await walletOf(split.seller)]
    await open('/orders', 'Orders and disputes')
    const item = page.getByRole('listitem').filter({ hasText: split.order.serviceTitle as string })
    await item.getByText(/disputed/).first().click()
    await item.getByRole('button', { name: 'Split the escrow…' }).click()
    await expectAccessible('orders-split')
    await item.getByLabel(/Refund to the buyer/).fill('40')
    await item.getByLabel('Note').fill('Half of the work was delivered as agreed.')
    await item.getByRole('button', { name: 'Split the escrow', exact: true }).click()
    await item.waitFor({ state: 'detached' })
    const order = (await request(ctx.app, { method: 'GET', url: `/orders/${split.orderId}`, token: split.buyer.accessToken })).json().data
    expect(order).toMatchObject({ status: 'completed', refunded: 40 })
    const [buyerAfter, sellerAfter] = [await walletOf(split.buyer), await walletOf(split.seller)]
    expect(buyerAfter.balance - buyerBefore.balance).toBeCloseTo(40, 2)
    expect(buyerAfter.escrow).toBeCloseTo(buyerBefore.escrow - split.order.total, 2)
    expect(sellerAfter.balance - sellerBefore.balance).toBeCloseTo(order.sellerEarning, 2)
    expect(order.sellerEarning).toBeCloseTo(split.order.total - 40 - order.platformFee, 2)
  })

  it('suspends a staff member with a reason, and their open console session ends', async () => {
    const theirs = await newPage(await browser.newContext())
    await theirs.goto(`${base}/console/`)
    await signIn(theirs, staffMember.user.email)
    // Only the sections their permissions open, and no action they may not take.
    expect(await theirs.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents()).toEqual(['Dashboard', 'Users', 'Orders and disputes'])
    await theirs.getByRole('link', { name: 'Users' }).click()
    await theirs.getByLabel('Search').fill(admin.user.email)
    await theirs.getByRole('link', { name: 'Olivia Operator' }).click()
    await theirs.getByRole('heading', { level: 1, name: 'Olivia Operator' }).waitFor()
    expect(await theirs.getByRole('button', { name: /Suspend|Deactivate/ }).count()).toBe(0)

    await open('/users', 'Users')
    // A failed action shows the API's message; then a new staff account is created.
    await page.getByRole('button', { name: 'New staff account…' }).click()
    const form = page.getByRole('form', { name: 'New staff account' })
    await form.getByLabel('Full name').fill('Nina New')
    await form.getByLabel('Username').fill('nina_new')
    await form.getByLabel('E-mail').fill(admin.user.email)
    await form.getByLabel('Password').fill('Staff-Desk-24')
    await form.getByRole('button', { name: 'Create' }).click()
    await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/email/i)
    await expectAccessible('users')
    await form.getByLabel('E-mail').fill('nina.new@example.test')
    await form.getByRole('button', { name: 'Create' }).click()
    await form.getByText('Created nina.new@example.test.').waitFor()
    await page.getByLabel('Search').fill(staffMember.user.email)
    await page.getByRole('link', { name: 'Sam Support' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sam Support' }).waitFor()
    await page.getByRole('button', { name: 'Suspend…' }).click()
    await page.getByLabel('Reason').fill('Shared their password with a contractor.')
    await page.getByRole('button', { name: 'Suspend', exact: true }).click()
    await page.getByRole('button', { name: 'Lift the suspension' }).waitFor()
    await page.getByText('Shared their password with a contractor.').first().waitFor()
    await expectAccessible('user')

    await theirs.getByRole('link', { name: 'Orders and disputes' }).click()
    await theirs.getByText('Your session has ended. Sign in again.').waitFor()
    await theirs.getByLabel('E-mail').fill(staffMember.user.email)
    await theirs.getByLabel('Password').fill(DEFAULT_PASSWORD)
    await theirs.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => theirs.getByRole('alert').textContent()).toMatch(/suspended/i)
    await theirs.context().close()
  })

  it('shows the webhooks, the event log and the audit log with its filters', async () => {
    await open('/webhooks', 'Webhooks')
    await expectAccessible('webhooks')
    await open('/events', 'Events')
    await page.getByRole('cell', { name: 'order.created', exact: true }).first().waitFor()
    await expectAccessible('events')
    await open('/audit', 'Audit log')
    await page.getByLabel('Action').fill('user.suspend')
    await page.getByRole('cell', { name: 'Shared their password with a contractor.' }).waitFor()
    await expectAccessible('audit')
  })

  it('signs out: the refresh token is spent and the sign-in page shows', async () => {
    const refreshToken = await page.evaluate<string | null>('sessionStorage.getItem("console.refreshToken")')
    expect(refreshToken).toBeTruthy()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.evaluate<string | null>('sessionStorage.getItem("console.refreshToken")')).toBeNull()
    expect((await request(ctx.app, { method: 'POST', url: '/auth/refresh', payload: { refreshToken } })).statusCode).toBe(401)
    await page.reload()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(policyViolations).toEqual([])
  })
})
