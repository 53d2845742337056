/**
 * `npm run bench:orders [-- --requests N --concurrency C --buyers B --services S]`: orders placed
 * per second (each one authenticated, validated, priced against its service, and booked in the
 * ledger into escrow with the order row and its event in one transaction), through `app.inject` on
 * DATABASE_URL (PostgreSQL) or the embedded database. It creates S active services and B funded
 * buyers, sends N orders C at a time (each buyer sends its own orders, C buyers at once), then
 * places N more as the route's twin (the token verified, then the service call the route makes:
 * the same statement with no HTTP in front), twice in turn, prints the ratio, and checks the books. Not part of `npm test`.
 */
import { parseArgs } from 'node:util'
import type { Actor } from '../src/access/access.ts'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { hashPassword } from '../src/lib/passwords.ts'
import { categories } from '../src/modules/catalogue/categories.table.ts'
import { measure, printRatio, status, type Measured } from './support/measure.ts'

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '100' }, buyers: { type: 'string', default: '100' }, services: { type: 'string', default: '20' } },
})
const [requests, concurrency, buyerCount, serviceCount] = [Number(values.requests), Number(values.concurrency), Number(values.buyers), Number(values.services)]
if (![requests, concurrency, buyerCount, serviceCount].every((value) => Number.isSafeInteger(value) && value > 0)) {
  console.error('--requests, --concurrency, --buyers and --services must be positive whole numbers')
  process.exit(2)
}

const loaded = loadConfig()
// Measured as deployed: `isProduction` drops the development guard around the database handle.
const config = { ...loaded, rateLimit: { ...loaded.rateLimit, general: 10_000_000 }, runWorker: false, logLevel: 'warn' as const, isProduction: true }
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
const offers: { serviceId: string; packageId: string }[] = []
for (let index = 0; index < serviceCount; index++) {
  const seller = actorOf(await account('seller', index))
  const service = await container.catalogue.createService(seller, {
    title: `Bench service number ${index}`,
    description: 'A service created by the orders benchmark, long enough to be valid.',
    categoryId: category.id,
    packages: [{ name: 'Basic', price: 25, deliveryDays: 3, revisions: 1 }],
  })
  await container.catalogue.approveService(seller, service.id)
  offers.push({ serviceId: service.id, packageId: service.packages[0]!.id })
}
const tokens: string[] = []
for (let index = 0; index < buyerCount; index++) {
  const buyer = await account('buyer', index)
  await container.db.transaction((tx) =>
    container.wallet.ledger.transfer(tx, { from: { platform: 'external' }, to: { userId: buyer.id, kind: 'available' }, amountCents: 100_000_000, type: 'adjustment', description: 'bench funds' }),
  )
  tokens.push((await container.auth.issueSession(buyer)).accessToken)
}

const send = (buyer: number, index: number) =>
  app.inject({ method: 'POST', url: '/api/v1/orders', headers: { authorization: `Bearer ${tokens[buyer]}` }, payload: { ...offers[index % offers.length]!, requirements: 'Benchmark order' } })
// The twin: what the route does without HTTP: the token verified (its session is checked inside
// the placement's statement, as for the route), then the same service call.
const placeDirect = async (buyer: number, index: number) =>
  container.orders.placeOrder({ claims: await container.auth.verifyAccess(tokens[buyer]!) }, { ...offers[index % offers.length]!, requirements: 'Benchmark order' })
for (let index = 0; index < Math.min(200, requests); index++) await send(index % tokens.length, index)
for (let index = 0; index < Math.min(200, requests); index++) await placeDirect(index % tokens.length, index)

// Route and twin in turn, twice (route, twin, twin, route), so that neither always runs on the larger tables.
const options = { count: requests, concurrency }
const placed = (order: { id: string }) => typeof order.id === 'string' || 'no order id'
const route: Measured[] = []
const direct: Measured[] = []
route.push(await measure('POST /orders', options, (worker, index) => send(worker % tokens.length, index), status(201)))
direct.push(await measure('placeOrder, direct', options, (worker, index) => placeDirect(worker % tokens.length, index), placed))
direct.push(await measure('placeOrder, direct', options, (worker, index) => placeDirect(worker % tokens.length, index), placed))
route.push(await measure('POST /orders', options, (worker, index) => send(worker % tokens.length, index), status(201)))
const failed = [...route, ...direct].reduce((sum, run) => sum + run.failed, 0)
const check = await container.wallet.checkLedger()
console.log(`${config.database.kind}: ${requests} orders per run, ${concurrency} buyers at a time (${buyerCount} buyers, ${serviceCount} services)`)
for (const [index, run] of route.entries()) printRatio(run, direct[index]!)
console.log(`ledger ${check.ok ? 'balanced' : `NOT balanced: ${JSON.stringify(check.problems.slice(0, 3))}`}`)
await app.close()
await database.close()
if (failed > 0 || !check.ok) process.exitCode = 1
