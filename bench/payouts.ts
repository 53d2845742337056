/**
 * `npm run bench:money [-- --requests N --concurrency C --users U]`: payout requests per second
 * (each one authenticated, validated, and booked in the ledger in one transaction), through
 * `app.inject` on DATABASE_URL (PostgreSQL) or the embedded database. It creates U verified
 * sellers with enough money in a throwaway set of accounts, then sends N payouts of the minimum,
 * C at a time, and checks the books afterwards. Not part of `npm test`.
 */
import { parseArgs } from 'node:util'
import { eq } from 'drizzle-orm'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { hashPassword } from '../src/lib/passwords.ts'
import { users } from '../src/modules/users/users.table.ts'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '100' }, users: { type: 'string', default: '100' } } })
const [requests, concurrency, userCount] = [Number(values.requests), Number(values.concurrency), Number(values.users)]
if (![requests, concurrency, userCount].every((value) => Number.isSafeInteger(value) && value > 0)) {
  console.error('--requests, --concurrency and --users must be positive whole numbers')
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
const tokens: string[] = []
for (let index = 0; index < userCount; index++) {
  const account = await container.db.transaction((tx) =>
    container.users.createAccount(tx, { email: `bench-${run}-${index}@bench.marketplace.test`, fullName: `Bench Seller ${index}`, passwordHash, isActive: true }),
  )
  await container.db.update(users).set({ isKycVerified: true }).where(eq(users.id, account.id))
  await container.db.transaction((tx) =>
    container.wallet.ledger.transfer(tx, { from: { platform: 'external' }, to: { userId: account.id, kind: 'available' }, amountCents: 100_000_000, type: 'adjustment', description: 'bench funds' }),
  )
  tokens.push((await container.auth.issueSession(account)).accessToken)
}

const payload = { amount: config.minPayoutCents / 100, method: 'paypal', details: { email: 'bench@example.test' } }
const send = (index: number) =>
  app.inject({ method: 'POST', url: '/api/v1/wallet/payout', headers: { authorization: `Bearer ${tokens[index % tokens.length]}` }, payload })
for (let index = 0; index < Math.min(200, requests); index++) await send(index)

const latencies: number[] = []
let next = 0
let failed = 0
const started = performance.now()
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < requests) {
      const index = next++
      const sent = performance.now()
      const response = await send(index)
      latencies.push(performance.now() - sent)
      if (response.statusCode !== 201) failed++
    }
  }),
)
const seconds = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!
const check = await container.wallet.checkLedger()
console.log(`${config.database.kind}: ${requests} payouts, ${concurrency} at a time, ${userCount} users`)
console.log(`${(requests / seconds).toFixed(0)} req/s, p50 ${percentile(50).toFixed(1)} ms, p99 ${percentile(99).toFixed(1)} ms, ${failed} not 201; ledger ${check.ok ? 'balanced' : `NOT balanced: ${JSON.stringify(check.problems.slice(0, 3))}`}`)
await app.close()
await database.close()
if (failed > 0 || !check.ok) process.exitCode = 1
