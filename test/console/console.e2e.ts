import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_DIST } from '../../src/http/console.ts'
import { DAY } from '../../src/lib/clock.ts'
import { seedDemo } from '../../src/seed/demo.ts'
import { multipart, pdf, png } from '../factories/files.ts'
import { orderIn, type PlacedOrder } from '../factories/orders.ts'
import { kycStep1, kycStep2, passKyc } from '../factories/kyc.ts'
import { sendMessage } from '../factories/messages.ts'
import { answerRequest, openRequest } from '../factories/requests.ts'
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
  let refundable: PlacedOrder
  let requested: PlacedOrder
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

  const walletOf = async (user: TestUser) => (await request(ctx.app, { method: 'GET', url: '/wallet', token: user.accessToken })).json().data as { balance: number; escrow: number; clearing: number }

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
    // Sellers' earnings clear for a week, as by default, so a completed order can still be refunded by staff.
    ctx = await createTestApp({ env: { PUBLIC_URL: base, CLEARANCE_DAYS: '7' } })
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
    // Its back is a PDF, the front and the selfie images: the review page shows both kinds.
    expect((await kycStep1(ctx.app, kycUser.accessToken)).statusCode).toBe(200)
    const documents = multipart([
      { name: 'documentType', value: 'id_card' },
      { name: 'documentFront', filename: 'front.png', content: await png({ seed: 1 }), contentType: 'image/png' },
      { name: 'documentBack', filename: 'back.pdf', content: pdf(), contentType: 'application/pdf' },
      { name: 'selfie', filename: 'selfie.png', content: await png({ seed: 3 }), contentType: 'image/png' },
    ])
    const submitted = await kycStep2(ctx.app, kycUser.accessToken, documents)
    expect(submitted.statusCode, submitted.body).toBe(200)
    const payee = await createUser(ctx, { fullName: 'Paula Payee' })
    await passKyc(ctx.app, payee.accessToken, admin.accessToken)
    expect((await request(ctx.app, { method: 'POST', url: '/wallet/deposits', token: payee.accessToken, payload: { amount: 150 } })).statusCode).toBe(201)
    const payout = await request(ctx.app, { method: 'POST', url: '/wallet/payout', token: payee.accessToken, payload: { amount: 120, method: 'paypal', details: { email: 'paula@example.test' } } })
    expect(payout.statusCode, payout.body).toBe(201)
    dispute = await orderIn(ctx, 'disputed')
    // A completed order whose seller's earning (90.00) is still clearing, and an order in progress
    // whose seller asked for more days (accepted) and then offered part of the price back (open).
    refundable = await orderIn(ctx, 'completed')
    requested = await orderIn(ctx, 'in_progress')
    const extension = await openRequest(ctx, requested.seller.accessToken, requested.orderId, { type: 'extension', days: 3, reason: 'The printer needs three more days for the proofs.' })
    expect((await answerRequest(ctx, requested.buyer.accessToken, requested.orderId, extension.id, 'accept')).statusCode).toBe(200)
    await openRequest(ctx, requested.seller.accessToken, requested.orderId, { type: 'partial_refund', amount: 15, reason: 'The files are late; part of the price goes back for the wait.' })
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
    // The eleven orders of the last two weeks and the three made for the tests below.
    await expect.poll(() => page.getByRole('figure').filter({ hasText: 'Orders placed' }).locator('figcaption').textContent()).toBe('Orders placed: 14 over 30 days')
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
    for (const side of ['front', 'selfie']) {
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
    // The PDF is embedded from its signed link, which serves it.
    const document = page.locator('object[type="application/pdf"]')
    expect(await document.getAttribute('aria-label')).toBe('back of the document (PDF)')
    const link = (await document.getAttribute('data')) ?? ''
    expect(await page.evaluate(async (url) => (await fetch(url)).headers.get('content-type'), link)).toBe('application/pdf')
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

  it('reads the wallet and statement of a payout’s requester, approves the payout, and checks the ledger', async () => {
    await open('/payouts', 'Payouts')
    const row = page.getByRole('row', { name: /paula@example\.test/ })
    await row.waitFor()
    await expect.poll(() => row.innerText()).toMatch(/Paula Payee @[\w.-]+ wallet and statement/)
    await expectAccessible('payouts')
    await row.getByRole('link', { name: 'Wallet and statement of Paula Payee' }).click()
    await page.getByRole('heading', { level: 1, name: 'Wallet of Paula Payee' }).waitFor()
    await expect.poll(() => page.locator('dl[aria-label="Balances"]').innerText()).toMatch(/Available\s+\$30\.00[\s\S]*Payouts waiting\s+\$120\.00/)
    const lines = page.locator('table tbody tr')
    await expect.poll(() => lines.allInnerTexts()).toEqual([
      expect.stringMatching(/payout\s+available\s+-\$120\.00\s+\$30\.00\s+Payout requested/),
      expect.stringMatching(/deposit\s+available\s+\$150\.00\s+\$150\.00\s+Deposit via sandbox/),
    ])
    // A superuser's correction: refused beyond the balance with the API's message, then booked.
    await page.getByRole('button', { name: 'Adjust the balance…' }).click()
    const adjustment = page.getByRole('form', { name: 'Adjust the balance' })
    await adjustment.getByLabel(/Amount/).fill('-31')
    await adjustment.getByLabel('Reason').fill('Bank fee charged back by the card issuer')
    await adjustment.getByRole('button', { name: 'Adjust the balance', exact: true }).click()
    await expect.poll(() => adjustment.getByRole('alert').textContent()).toBe('The available balance (30.00) does not cover 31.00')
    await expectAccessible('wallet')
    await adjustment.getByLabel(/Amount/).fill('-5')
    await adjustment.getByRole('button', { name: 'Adjust the balance', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Adjusted by -$5.00.' }).waitFor()
    await expect.poll(() => lines.first().innerText()).toMatch(/adjustment\s+available\s+-\$5\.00\s+\$25\.00\s+Adjustment by staff: Bank fee charged back/)
    await page.getByRole('link', { name: '← Payouts' }).click()
    await row.getByRole('button', { name: 'Approve' }).click()
    await row.waitFor({ state: 'detached' })
    const processed = await request(ctx.app, { method: 'GET', url: '/admin/payouts?status=processed', token: admin.accessToken })
    expect(processed.json().data.items).toHaveLength(1)
    await page.getByRole('button', { name: 'Check the ledger' }).click()
    await expect.poll(() => page.getByRole('status').last().textContent()).toMatch(/The books balance/)
  })

  it('resolves a dispute all or nothing: the buyer is refunded in full', async () => {
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
    // The seller's part clears for CLEARANCE_DAYS before it is available.
    expect(sellerAfter.clearing - sellerBefore.clearing).toBeCloseTo(order.sellerEarning, 2)
    expect(sellerAfter.balance).toBe(sellerBefore.balance)
    expect(order.sellerEarning).toBeCloseTo(split.order.total - 40 - order.platformFee, 2)
  })

  it('shows the requests between an order’s parties on its timeline', async () => {
    await open(`/orders/${requested.orderId}`, requested.order.serviceTitle as string)
    const timeline = page.getByRole('list', { name: 'Timeline' })
    const extension = timeline.getByRole('listitem').filter({ hasText: 'Extension request of 3 days by the seller' })
    await expect.poll(() => extension.textContent()).toMatch(/accepted, accepted .*The printer needs three more days for the proofs\./)
    const partial = timeline.getByRole('listitem').filter({ hasText: 'Partial refund request of $15.00 by the seller' })
    await expect.poll(() => partial.textContent()).toMatch(/open, to be answered by .*The files are late/)
    // Oldest first: the seller's acceptance of the order, the extension (accepted since), the open partial refund.
    expect((await timeline.getByRole('listitem').allTextContents()).map((line) => line.replace(/^[^:]*\d{2}:\d{2}: /, '').split(' ').slice(0, 2).join(' '))).toEqual([
      'accept by',
      'Extension request',
      'Partial refund',
    ])
    await expectAccessible('order')
  })

  it('refunds part of a completed order while its earnings clear: the buyer gets it back, the seller’s clearing shrinks', async () => {
    const [buyerBefore, sellerBefore] = [await walletOf(refundable.buyer), await walletOf(refundable.seller)]
    await open(`/orders/${refundable.orderId}`, refundable.order.serviceTitle as string)
    await page.getByRole('button', { name: 'Refund to the buyer…' }).click()
    const form = page.getByRole('form', { name: 'Refund to the buyer' })
    await form.getByLabel(/Amount back to the buyer/).fill('500')
    await form.getByLabel('Note').fill('The source files never arrived; part of the price goes back to the buyer.')
    await form.getByRole('button', { name: 'Refund to the buyer', exact: true }).click()
    // The API's refusal, naming what is still clearing.
    await expect.poll(() => form.getByRole('alert').textContent()).toMatch(/invalid: amount must be at most 90\.00, what the seller still has clearing/)
    await expectAccessible('order-staff-refund')
    await form.getByLabel(/Amount back to the buyer/).fill('30')
    await form.getByRole('button', { name: 'Refund to the buyer', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Refunded $30.00 to the buyer.' }).waitFor()
    await page.getByText('$30.00 back to the buyer').waitFor()
    const [buyerAfter, sellerAfter] = [await walletOf(refundable.buyer), await walletOf(refundable.seller)]
    expect(buyerAfter.balance - buyerBefore.balance).toBeCloseTo(30, 2)
    expect(sellerAfter).toMatchObject({ balance: sellerBefore.balance, clearing: sellerBefore.clearing - 30 })

    // The seller's wallet on their page: what still clears, and the statement's lines.
    await page.getByRole('link', { name: refundable.seller.user.fullName, exact: true }).click()
    await page.getByRole('heading', { level: 1, name: refundable.seller.user.fullName, exact: true }).waitFor()
    await expect.poll(() => page.locator('dl[aria-label="Balances"]').innerText()).toMatch(/Clearing\s+\$60\.00, the next earning becomes available/)
    const statement = page.getByRole('region', { name: 'Statement' })
    await expect.poll(() => statement.locator('tbody tr').allInnerTexts()).toEqual([
      expect.stringMatching(/earning reversal\s+clearing\s+-\$30\.00\s+\$60\.00\s+Staff refund: /),
      expect.stringMatching(/order earning\s+clearing\s+\$90\.00\s+\$90\.00\s+Earning: /),
    ])
    await expectAccessible('user-wallet')
    await statement.getByLabel('Balance').selectOption('available')
    await statement.getByRole('cell', { name: 'No movements.' }).waitFor()
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
    // An order they may see but not refund, and no wallet (view_accounts) on a user's page.
    expect(await theirs.getByRole('heading', { name: 'Wallet' }).count()).toBe(0)
    await theirs.goto(`${base}/console/orders/${refundable.orderId}`)
    await theirs.getByRole('heading', { level: 3, name: 'Timeline' }).waitFor()
    expect(await theirs.getByRole('button', { name: /Refund/ }).count()).toBe(0)

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

    await theirs.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Orders and disputes' }).click()
    await theirs.getByText('Your session has ended. Sign in again.').waitFor()
    await theirs.getByLabel('E-mail').fill(staffMember.user.email)
    await theirs.getByLabel('Password').fill(DEFAULT_PASSWORD)
    await theirs.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => theirs.getByRole('alert').textContent()).toMatch(/suspended/i)
    await theirs.context().close()
  })

  it('registers a webhook endpoint and tests it, creates a staff role, and shows the event log and the audit log with its filters', async () => {
    await open('/webhooks', 'Webhooks')
    await page.locator('summary', { hasText: 'New endpoint' }).click()
    const endpoint = page.getByRole('form', { name: 'New endpoint' })
    await endpoint.getByLabel('URL').fill('http://127.0.0.1:9/hooks')
    await endpoint.getByLabel(/Events/).fill('order.created, order.misspelt')
    await endpoint.getByRole('button', { name: 'Register' }).click()
    await expect.poll(() => endpoint.getByRole('alert').textContent()).toMatch(/events/)
    await endpoint.getByLabel(/Events/).fill('order.created, order.refunded')
    await endpoint.getByRole('button', { name: 'Register' }).click()
    await endpoint.getByText(/shown this once: whsec_/).waitFor()
    const card = page.getByRole('region', { name: 'http://127.0.0.1:9/hooks' })
    await card.getByRole('button', { name: 'Send a test event' }).click()
    await card.getByText(/Test event queued/).waitFor()
    await card.locator('summary', { hasText: 'Deliveries' }).click()
    await card.getByRole('cell', { name: 'webhook.test', exact: true }).waitFor()
    await expectAccessible('webhooks')

    await open('/roles', 'Staff roles')
    await page.locator('summary', { hasText: 'New role' }).click()
    const role = page.getByRole('form', { name: 'New role' })
    await role.getByLabel('Name').fill('Accounts desk')
    await role.getByLabel(/see payouts, wallets and statements/).check()
    await role.getByLabel(/approve and reject payouts/).check()
    await role.getByRole('button', { name: 'Create the role' }).click()
    await page.getByRole('region', { name: 'Accounts desk' }).waitFor()
    await expectAccessible('roles')
    const roles = (await request(ctx.app, { method: 'GET', url: '/admin/roles', token: admin.accessToken })).json().data as { name: string; permissions: string[] }[]
    expect(roles.find((found) => found.name === 'Accounts desk')?.permissions.sort()).toEqual(['approve_withdrawals', 'view_accounts'])

    await open('/events', 'Events')
    await page.getByRole('cell', { name: 'order.created', exact: true }).first().waitFor()
    await expectAccessible('events')
    await open('/audit', 'Audit log')
    await page.getByLabel('Action').fill('user.suspend')
    await page.getByRole('cell', { name: 'Shared their password with a contractor.' }).waitFor()
    await expectAccessible('audit')
    // The target of an entry links to its page.
    await page.getByRole('row', { name: /Shared their password/ }).getByRole('link', { name: /^user / }).first().click()
    await page.getByRole('heading', { level: 1, name: 'Sam Support' }).waitFor()
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
