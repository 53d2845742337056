/**
 * `npm run bench:completions [-- --requests N --concurrency C]`: deposits and order completions
 * per second, the two writes that book on a platform ledger account (a deposit takes money from
 * `external`, a completion pays the platform's fee into `revenue`), through `app.inject` on
 * DATABASE_URL (PostgreSQL) or the embedded database. It creates C buyers and C sellers (so that
 * no user's own account is shared by two requests in flight), sends N deposits C at a time, then
 * prepares N delivered orders and completes them C at a time, and checks the books. The platform
 * accounts are spread over LEDGER_PLATFORM_SUB_ACCOUNTS rows (16 by default); run it again with
 * LEDGER_PLATFORM_SUB_ACCOUNTS=1 to see the same load queue on one row. Not part of `npm test`.
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import type { Actor } from '../src/access/access.ts'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { hashPassword } from '../src/lib/passwords.ts'
import { categories } from '../src/modules/catalogue/categories.table.ts'

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

/** Runs `count` requests, `concurrency` at a time, and reports them. */
async function measure(name: string, count: number, send: (worker: number, index: number) => Promise<{ statusCode: number; body: string }>, expected: number) {
  const latencies: number[] = []
  let next = 0
  let failed = 0
  let firstFailure = ''
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (next < count) {
        const index = next++
        const sent = performance.now()
        const response = await send(worker, index)
        latencies.push(performance.now() - sent)
        if (response.statusCode !== expected && failed++ === 0) firstFailure = ` (first: ${response.statusCode} ${response.body.slice(0, 300)})`
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!
  console.log(`${name}: ${(count / seconds).toFixed(0)} req/s, p50 ${percentile(50).toFixed(1)} ms, p99 ${percentile(99).toFixed(1)} ms, ${failed} not ${expected}${firstFailure}`)
  return failed
}

// Deposits: each request books external -> the buyer's available balance.
let failed = await measure('deposits', requests, (worker) => inject(buyers[worker]!, 'POST', '/wallet/deposits', { amount: 30 }), 201)

// N delivered orders, C at a time, worker w's orders all between buyer w and seller w.
const delivered: { orderId: string; buyer: string }[] = []
failed += await measure(
  'preparing orders (place, start, deliver)',
  requests,
  async (worker) => {
    const seller = sellers[worker]!
    const placed = await inject(buyers[worker]!, 'POST', '/orders', { ...seller.offer, requirements: 'Benchmark order' })
    if (placed.statusCode !== 201) return placed
    const orderId = placed.json<{ data: { id: string } }>().data.id
    const started = await inject(seller.token, 'PUT', `/orders/${orderId}/status`, { status: 'in_progress' })
    if (started.statusCode !== 200) return started
    const form = deliveryForm()
    const done = await inject(seller.token, 'POST', `/orders/${orderId}/deliver`, form.payload, form.headers)
    if (done.statusCode === 200) delivered.push({ orderId, buyer: buyers[worker]! })
    return done
  },
  200,
)

// Completions: each request books the buyer's escrow -> the seller's balance and -> the platform's revenue.
failed += await measure(
  'completions',
  delivered.length,
  (_worker, index) => inject(delivered[index]!.buyer, 'PUT', `/orders/${delivered[index]!.orderId}/status`, { status: 'completed' }),
  200,
)

const check = await container.wallet.checkLedger()
console.log(`${config.database.kind}: ${requests} deposits and completions, ${concurrency} at a time, platform accounts over ${config.ledgerPlatformSubAccounts} sub-accounts, pool ${config.database.kind === 'postgres' ? config.database.poolSize : 1}`)
console.log(`ledger ${check.ok ? 'balanced' : `NOT balanced: ${JSON.stringify(check.problems.slice(0, 3))}`}`)
await app.close()
await database.close()
if (failed > 0 || !check.ok) process.exitCode = 1
