/**
 * `npm run bench:completions [-- --requests N --concurrency C]`: deposits and order completions
 * per second, the two writes that book on a platform ledger account (a deposit takes money from
 * `external`, a completion pays the platform's fee into `revenue`), on DATABASE_URL (PostgreSQL)
 * or the embedded database. It creates C buyers and C sellers (so that no user's own account is
 * shared by two requests in flight). Each write runs N times C at a time, four times over: through
 * its route (`app.inject`), as its twin (the caller's session resolved from the token and the
 * service call the route makes: the same statements with no HTTP in front),
 * the twin again and the route again; the ratio of each pair is printed. The completions need 4N
 * delivered orders, prepared through the routes in between (not measured as such). Then it checks
 * the books. The platform accounts are spread over LEDGER_PLATFORM_SUB_ACCOUNTS rows (16 by
 * default); run it again with LEDGER_PLATFORM_SUB_ACCOUNTS=1 to see the same load queue on one
 * row. Not part of `npm test`.
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import type { Actor } from '../src/access/access.ts'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { hashPassword } from '../src/lib/passwords.ts'
import { categories } from '../src/modules/catalogue/categories.table.ts'
import { measure, printRatio, status, type Measured } from './support/measure.ts'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '2000' }, concurrency: { type: 'string', default: '100' } } })
const [requests, concurrency] = [Number(values.requests), Number(values.concurrency)]
if (![requests, concurrency].every((value) => Number.isSafeInteger(value) && value > 0)) {
  console.error('--requests and --concurrency must be positive whole numbers')
  process.exit(2)
}

const loaded = loadConfig()
// Measured as deployed: `isProduction` drops the development guard around the database handle; the sandbox provider credits deposits.
const config = {
  ...loaded,
  rateLimit: { ...loaded.rateLimit, general: 10_000_000, uploads: 10_000_000 },
  payments: { ...loaded.payments, sandboxEnabled: true },
  runWorker: false,
  logLevel: 'warn' as const,
  isProduction: true,
}
const database = await openMigratedDatabase(config.database)
const app = await buildApp({ config, database })
await app.ready()
const { container } = app

const run = Date.now().toString(36)
const passwordHash = await hashPassword('Bench-Passw0rd')
const account = (kind: string, index: number) =>
  container.db.transaction((tx) => container.users.createAccount(tx, { email: `bench-${kind}-${run}-${index}@bench.marketplace.test`, fullName: `Bench ${kind} ${index}`, passwordHash, isActive: true }))
const actorOf = (row: { id: string; email: string; fullName: string }): Actor => ({ id: row.id, email: row.email, fullName: row.fullName, isStaff: false, isSuperuser: false, permissions: new Set() })

const [category] = await container.db.select({ id: categories.id }).from(categories).limit(1)
if (!category) throw new Error('no category: run the migrations (they add the default categories)')
const buyers: string[] = []
const sellers: { token: string; offer: { serviceId: string; packageId: string } }[] = []
for (let index = 0; index < concurrency; index++) {
  const seller = await account('seller', index)
  const service = await container.catalogue.createService(actorOf(seller), {
    title: `Bench service number ${index}`,
    description: 'A service created by the completions benchmark, long enough to be valid.',
    categoryId: category.id,
    packages: [{ name: 'Basic', price: 25, deliveryDays: 3, revisions: 1 }],
  })
  await container.catalogue.approveService(actorOf(seller), service.id)
  sellers.push({ token: (await container.auth.issueSession(seller)).accessToken, offer: { serviceId: service.id, packageId: service.packages[0]!.id } })
  buyers.push((await container.auth.issueSession(await account('buyer', index))).accessToken)
}

const inject = (token: string, method: 'POST' | 'PUT', url: string, payload: object | Buffer, headers: Record<string, string> = {}) =>
  app.inject({ method, url: `/api/v1${url}`, headers: { authorization: `Bearer ${token}`, ...headers }, payload })

/** A delivery's form: a message and one small file. */
function deliveryForm(): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----bench-${randomBytes(8).toString('hex')}`
  const payload = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="message"\r\n\r\nHere it is\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="work.txt"\r\nContent-Type: text/plain\r\n\r\nthe work\n\r\n--${boundary}--\r\n`,
  )
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

const options = { count: requests, concurrency }
// The twins: what the routes do without HTTP: the caller's session resolved from the token (one
// statement, as the route's authentication does it), then the same service call.
const sessionActor = async (token: string) => (await container.auth.authenticate(token)).actor
const route: Measured[] = []
const direct: Measured[] = []
const credited = (deposit: { status: string }) => deposit.status === 'succeeded' || `deposit ${deposit.status}`

// Deposits: each books external -> the buyer's available balance; a warm-up of both at full
// concurrency (what is measured first otherwise runs while V8 still optimises), then route, twin,
// twin, route.
await measure('warm-up: POST /wallet/deposits', options, (worker) => inject(buyers[worker]!, 'POST', '/wallet/deposits', { amount: 30 }), status(201))
await measure('warm-up: deposit, direct', options, async (worker) => container.wallet.deposit(await sessionActor(buyers[worker]!), 30), credited)
route.push(await measure('POST /wallet/deposits', options, (worker) => inject(buyers[worker]!, 'POST', '/wallet/deposits', { amount: 30 }), status(201)))
direct.push(await measure('deposit, direct', options, async (worker) => container.wallet.deposit(await sessionActor(buyers[worker]!), 30), credited))
direct.push(await measure('deposit, direct', options, async (worker) => container.wallet.deposit(await sessionActor(buyers[worker]!), 30), credited))
route.push(await measure('POST /wallet/deposits', options, (worker) => inject(buyers[worker]!, 'POST', '/wallet/deposits', { amount: 30 }), status(201)))

// 4N delivered orders (not measured as such), C at a time, worker w's orders all between buyer w and seller w.
const delivered: { orderId: string; buyer: number }[] = []
const prepared = await measure(
  'preparing orders (place, start, deliver)',
  { count: 4 * requests, concurrency },
  async (worker) => {
    const seller = sellers[worker]!
    const placed = await inject(buyers[worker]!, 'POST', '/orders', { ...seller.offer, requirements: 'Benchmark order' })
    if (placed.statusCode !== 201) return placed
    const orderId = placed.json<{ data: { id: string } }>().data.id
    const started = await inject(seller.token, 'PUT', `/orders/${orderId}/status`, { status: 'in_progress' })
    if (started.statusCode !== 200) return started
    const form = deliveryForm()
    const done = await inject(seller.token, 'POST', `/orders/${orderId}/deliver`, form.payload, form.headers)
    if (done.statusCode === 200) delivered.push({ orderId, buyer: worker })
    return done
  },
  status(200),
)

// Completions: each books the buyer's escrow -> the seller's balance and -> the platform's revenue;
// route, twin, twin, route, each on its own quarter of the delivered orders.
const quarter = (part: number) => delivered.slice(part * requests, (part + 1) * requests)
const completeByRoute = async (orders: typeof delivered) =>
  measure('PUT /orders/{id}/status completed', { count: orders.length, concurrency }, (_worker, index) => inject(buyers[orders[index]!.buyer]!, 'PUT', `/orders/${orders[index]!.orderId}/status`, { status: 'completed' }), status(200))
const completeDirect = async (orders: typeof delivered) =>
  measure('changeStatus completed, direct', { count: orders.length, concurrency }, async (_worker, index) => container.orders.changeStatus(await sessionActor(buyers[orders[index]!.buyer]!), orders[index]!.orderId, 'completed', undefined), (order) => order.status === 'completed' || `order ${order.status}`)
route.push(await completeByRoute(quarter(0)))
direct.push(await completeDirect(quarter(1)))
direct.push(await completeDirect(quarter(2)))
route.push(await completeByRoute(quarter(3)))
const failed = prepared.failed + [...route, ...direct].reduce((sum, run) => sum + run.failed, 0)

const check = await container.wallet.checkLedger()
console.log(`${config.database.kind}: ${requests} deposits and completions, ${concurrency} at a time, platform accounts over ${config.ledgerPlatformSubAccounts} sub-accounts, pool ${config.database.kind === 'postgres' ? config.database.poolSize : 1}`)
for (const [index, run] of route.entries()) printRatio(run, direct[index]!)
console.log(`ledger ${check.ok ? 'balanced' : `NOT balanced: ${JSON.stringify(check.problems.slice(0, 3))}`}`)
await app.close()
await database.close()
if (failed > 0 || !check.ok) process.exitCode = 1
