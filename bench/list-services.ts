/**
 * `npm run bench [-- --requests N --concurrency C]`: requests per second and latency of
 * GET /api/v1/services for a few query shapes. The app runs in this process on DATABASE_URL
 * (PostgreSQL) or, when it is unset, on the embedded database under DATA_DIR; requests go
 * through `app.inject`, so the numbers are the app and the database without the network stack.
 * Seed first: `npm run seed -- --services 100000`.
 */
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'
import { runMigrations } from '../src/db/migrate.ts'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '500' }, concurrency: { type: 'string', default: '10' } } })
const requests = Number(values.requests)
const concurrency = Number(values.concurrency)
if (!Number.isSafeInteger(requests) || requests < 1 || !Number.isSafeInteger(concurrency) || concurrency < 1) {
  console.error('--requests and --concurrency must be positive whole numbers')
  process.exit(2)
}

const SHAPES: [string, string][] = [
  ['newest', '/api/v1/services'],
  ['cheapest', '/api/v1/services?sortBy=price&sortOrder=asc'],
  ['best rated', '/api/v1/services?sortBy=rating'],
  ['category', '/api/v1/services?category=graphics-design&sortBy=price'],
  ['price range', '/api/v1/services?minPrice=20&maxPrice=50'],
  ['page 50', '/api/v1/services?page=50&limit=20'],
  ['search', '/api/v1/services?search=logo%20design'],
  ['search typo', '/api/v1/services?search=logo%20desgin'],
]

// Rate limits would answer 429 after a hundred requests; the worker has no part in reads.
const loaded = loadConfig()
const config = { ...loaded, rateLimit: { ...loaded.rateLimit, general: 1_000_000 }, runWorker: false, logLevel: 'warn' as const }
const database = openDatabase(config.database)
await runMigrations(database)
const app = await buildApp({ config, database })
await app.ready()

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

console.log(`${config.database.kind}, ${requests} requests per shape, concurrency ${concurrency}\n`)
const rows: string[][] = [['shape', 'req/s', 'p50 ms', 'p99 ms', 'total']]
try {
  for (const [name, url] of SHAPES) {
    const first = await app.inject({ method: 'GET', url })
    if (first.statusCode !== 200) throw new Error(`${url} answered ${first.statusCode}: ${first.body.slice(0, 200)}`)
    const total = String(first.json<{ data: { pagination: { total: number } } }>().data.pagination.total)
    // A short warm-up, then the measured run.
    for (let index = 0; index < Math.min(20, requests); index++) await app.inject({ method: 'GET', url })
    const latencies: number[] = []
    let next = 0
    const started = performance.now()
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) {
          next++
          const sent = performance.now()
          const response = await app.inject({ method: 'GET', url })
          latencies.push(performance.now() - sent)
          if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`)
        }
      }),
    )
    const seconds = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    rows.push([name, (latencies.length / seconds).toFixed(0), percentile(latencies, 50).toFixed(1), percentile(latencies, 99).toFixed(1), total])
  }
} finally {
  await app.close()
  await database.close()
}

const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
for (const row of rows) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '))
