/**
 * `npm run bench:scale [-- --duration 3 --rounds 2 --connections 100 --only <words>]`
 *
 * Cost as the data grows: on a database seeded with `npm run seed -- --services N --activity`
 * (DATABASE_URL), every catalogue read of bench/catalogue.ts and the reads of a busy account
 * (a buyer's and a seller's order lists, an order, the conversation list and a conversation page,
 * a service's reviews, a seller's statistics, the notifications) are loaded for `--rounds` rounds
 * of `--duration` seconds at `--connections` keep-alive connections each, from a separate process.
 * It prints req/s, p50 and p99 per route, the database's size and its biggest tables, and, for
 * each route, the statements one request runs, explained with ANALYZE and BUFFERS (inside a
 * transaction rolled back, under the generic plan the app's named statements settle on); the
 * plan of the slowest statement of the route with the worst p99 is printed in full. Results go
 * to bench/results/<date>-scale-<services>.json and .md.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import pg from 'pg'
import pino from 'pino'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'
import { runMigrations } from '../src/db/migrate.ts'
import { API_PREFIX } from '../src/http/prefix.ts'
import { createRealtimeHub } from '../src/platform/realtime/create-hub.ts'
import { catalogueRoutes, catalogueSample, loader, median, type Route } from './catalogue-routes.ts'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '100' },
    only: { type: 'string' },
  },
})
const durationMs = Number(values.duration) * 1000
const rounds = Number(values.rounds)
const connections = Number(values.connections)
if (![durationMs, rounds, connections].every((value) => Number.isFinite(value) && value > 0)) {
  console.error('--duration, --rounds and --connections must be positive numbers')
  process.exit(2)
}

const loaded = loadConfig()
if (loaded.database.kind !== 'postgres') {
  console.error('bench:scale needs DATABASE_URL (a PostgreSQL database seeded with --services N --activity)')
  process.exit(2)
}
const databaseUrl = loaded.database.url
// Rate limits would answer 429; the worker has no part in reads. Measured as deployed.
const config = { ...loaded, rateLimit: { ...loaded.rateLimit, general: 100_000_000, auth: 100_000_000 }, runWorker: false, logLevel: 'error' as const, isProduction: true }

/** The statements the app sends while `capturing` is set: what one request of a route runs. */
let capturing: { text: string; values: unknown[] }[] | undefined
// eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with the client as `this` below
const clientQuery = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [first, second] = args
  if (capturing) {
    if (typeof first === 'string') capturing.push({ text: first, values: Array.isArray(second) ? (second as unknown[]) : [] })
    else if (first && typeof first === 'object' && 'text' in first) {
      const config = first as { text: string; values?: unknown[] }
      capturing.push({ text: config.text, values: config.values ?? (Array.isArray(second) ? (second as unknown[]) : []) })
    }
  }
  return clientQuery.apply(this, args)
} as typeof pg.Client.prototype.query

const database = await openDatabase(config.database)
await runMigrations(database)
const realtime = createRealtimeHub({ redisUrl: config.redisUrl, ...config.realtime, logger: pino({ level: 'silent' }) })
const app = await buildApp({ config, database, realtime })
await app.listen({ host: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}${API_PREFIX}`

// The bench's own connection, for the sample, the sizes and the plans.
const own = new pg.Pool({ connectionString: databaseUrl, max: 2 })
const query = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await own.query(text, params)).rows as T[]

/** The busiest buyer and seller the seed drew, and an order, a conversation and a service of theirs. */
async function activityRoutes(): Promise<Route[]> {
  const [buyer] = await query<{ id: string }>(`select id from users where email like 'buyer1@%'`)
  if (!buyer) throw new Error('no generated buyer: seed with --activity first')
  const [busiest] = await query<{ serviceId: string; sellerId: string }>(
    `select service_id as "serviceId", seller_id as "sellerId" from orders group by service_id, seller_id order by count(*) desc limit 1`,
  )
  const [order] = await query<{ id: string; conversationId: string }>(
    `select o.id, c.id as "conversationId" from orders o join conversations c on c.order_id = o.id where o.buyer_id = $1 order by o.created_at desc limit 1`,
    [buyer.id],
  )
  const tokenOf = async (id: string) => {
    const account = await app.container.users.findAccountById(database.db, id)
    return (await app.container.auth.issueSession(account!)).accessToken
  }
  const [buyerToken, sellerToken] = [await tokenOf(buyer.id), await tokenOf(busiest!.sellerId)]
  return [
    { name: 'GET /orders/purchases (busiest buyer)', path: '/orders/purchases', connections, token: buyerToken },
    { name: 'GET /orders/sales (busiest seller)', path: '/orders/sales', connections, token: sellerToken },
    { name: 'GET /orders/{id}', path: `/orders/${order!.id}`, connections, token: buyerToken },
    { name: 'GET /messages/conversations (busiest buyer)', path: '/messages/conversations', connections, token: buyerToken },
    { name: 'GET /messages/conversations/{id}', path: `/messages/conversations/${order!.conversationId}`, connections, token: buyerToken },
    { name: 'GET /services/{id}/reviews (busiest service)', path: `/services/${busiest!.serviceId}/reviews`, connections },
    { name: 'GET /users/{id}/stats (busiest seller)', path: `/users/${busiest!.sellerId}/stats`, connections },
    { name: 'GET /notifications (busiest seller)', path: '/notifications', connections, token: sellerToken },
  ]
}

interface Explained {
  statement: string
  milliseconds: number
  sharedBuffers: number
  seqScans: string[]
  plan: string
}

/** The statements of one request of the route, each explained with ANALYZE and BUFFERS in a transaction rolled back. */
async function explainRoute(route: Route): Promise<Explained[]> {
  capturing = []
  const response = await fetch(`${base}${route.path}`, { headers: headersOf(route) })
  await response.arrayBuffer()
  const statements = capturing
  capturing = undefined
  const client = await own.connect()
  const explained: Explained[] = []
  try {
    for (const statement of statements) {
      if (!/^\s*(with|select|update|insert)/i.test(statement.text)) continue
      await client.query('begin')
      try {
        // The app's named statements settle on their generic plan; explain that one.
        await client.query('set local plan_cache_mode = force_generic_plan')
        const { rows } = await client.query<{ 'QUERY PLAN': string }>({ text: `explain (analyze, buffers) ${statement.text}`, values: statement.values })
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n')
        const time = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? 0)
        const hits = [...plan.matchAll(/shared hit=(\d+)(?: read=(\d+))?/g)].map((match) => Number(match[1]) + Number(match[2] ?? 0))
        explained.push({
          statement: statement.text.replace(/\s+/g, ' ').slice(0, 160),
          milliseconds: time,
          sharedBuffers: hits[0] ?? 0,
          seqScans: [...new Set([...plan.matchAll(/Seq Scan on (\w+)/g)].map((match) => match[1]!))],
          plan,
        })
      } finally {
        await client.query('rollback')
      }
    }
  } finally {
    client.release()
  }
  return explained
}

const headersOf = (route: Route): Record<string, string> => (route.token ? { authorization: `Bearer ${route.token}` } : {})

const workers: ChildProcess[] = []
const load = loader(workers)
try {
  const { sample, servicesTotal } = await catalogueSample((name, text, params) => own.query({ name, text, values: params }))
  const all = [...catalogueRoutes(sample, connections, connections), ...(await activityRoutes())]
  const routes = values.only === undefined ? all : all.filter((route) => route.name.includes(values.only!))
  const results = routes.map((route) => ({ route, status: 0, samples: [] as { rps: number; p50: number; p99: number; errors: number }[], explained: [] as Explained[] }))
  for (const result of results) {
    const response = await fetch(`${base}${result.route.path}`, { headers: headersOf(result.route) })
    result.status = response.status
    await response.arrayBuffer()
    if (response.status !== 200) console.warn(`${result.route.name} answered ${response.status}`)
    await load({ url: `${base}${result.route.path}`, headers: headersOf(result.route), connections: result.route.connections, durationMs: 1000 })
  }
  const loadBefore = loadavg()
  for (let round = 0; round < rounds; round++) {
    for (const result of results) {
      const measured = await load({ url: `${base}${result.route.path}`, headers: headersOf(result.route), connections: result.route.connections, durationMs })
      result.samples.push({ rps: measured.rps, p50: measured.p50, p99: measured.p99, errors: measured.errors })
      console.log(`round ${round + 1} ${result.route.name}: ${measured.rps.toFixed(0)} req/s, p50 ${measured.p50.toFixed(1)} ms, p99 ${measured.p99.toFixed(1)} ms${measured.errors ? `, ${measured.errors} errors` : ''}`)
    }
  }
  const loadAfter = loadavg()
  for (const result of results) result.explained = await explainRoute(result.route)
  await writeReport({ servicesTotal, results, loadBefore, loadAfter })
} finally {
  for (const worker of workers) worker.kill()
  await app.close()
  await own.end()
  await database.close()
}

async function writeReport(input: {
  servicesTotal: number
  results: { route: Route; status: number; samples: { rps: number; p50: number; p99: number; errors: number }[]; explained: Explained[] }[]
  loadBefore: number[]
  loadAfter: number[]
}) {
  const [sizes] = await query<Record<string, string>>(`select pg_database_size(current_database())::bigint as database,
      (select count(*) from orders)::bigint as orders, (select count(*) from messages)::bigint as messages, (select count(*) from reviews)::bigint as reviews,
      (select count(*) from users)::bigint as users, (select count(*) from ledger_entries)::bigint as "ledgerEntries", (select count(*) from notifications)::bigint as notifications`)
  const tables = await query<{ table: string; bytes: string }>(`select c.relname as table, pg_total_relation_size(c.oid)::bigint as bytes
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind = 'r' order by 2 desc limit 10`)
  const rows = input.results.map(({ route, status, samples, explained }) => {
    const slowest = [...explained].sort((a, b) => b.milliseconds - a.milliseconds)[0]
    return {
      route: route.name,
      connections: route.connections,
      status,
      rps: median(samples.map((s) => s.rps)),
      p50: median(samples.map((s) => s.p50)),
      p99: median(samples.map((s) => s.p99)),
      errors: samples.reduce((sum, s) => sum + s.errors, 0),
      statements: explained.length,
      slowestStatementMs: slowest?.milliseconds ?? 0,
      slowestStatementBuffers: slowest?.sharedBuffers ?? 0,
      seqScans: [...new Set(explained.flatMap((e) => e.seqScans))],
      rounds: samples,
      explained,
    }
  })
  const worst = [...rows].sort((a, b) => b.p99 - a.p99)[0]!
  const worstPlan = [...worst.explained].sort((a, b) => b.milliseconds - a.milliseconds)[0]
  const gb = (bytes: string | number) => `${(Number(bytes) / 2 ** 30).toFixed(2)} GiB`
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`
  const report = { date: new Date().toISOString(), activeServices: input.servicesTotal, machine, loadAverage: { before: input.loadBefore, after: input.loadAfter }, durationSeconds: durationMs / 1000, rounds, sizes, tables, routes: rows }
  const stamp = report.date.slice(0, 16).replace(/[:T]/g, '-')
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
  const file = `./results/${stamp}-scale-${input.servicesTotal}`
  writeFileSync(new URL(`${file}.json`, import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
  const f = (value: number) => value.toFixed(value >= 100 ? 0 : 1)
  const markdown = [
    `# Cost as the data grows: ${input.servicesTotal} services, ${report.date.slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${machine}; load average ${input.loadBefore.map((v) => v.toFixed(1)).join(' ')} before, ${input.loadAfter.map((v) => v.toFixed(1)).join(' ')} after; ${rounds} rounds of ${durationMs / 1000} s per route.`,
    '',
    `Database ${gb(sizes!.database!)}: ${sizes!.orders} orders, ${sizes!.messages} messages, ${sizes!.reviews} reviews, ${sizes!.users} users, ${sizes!.ledgerEntries} ledger entries, ${sizes!.notifications} notifications.`,
    '',
    `Biggest tables (with indexes): ${tables.map((t) => `${t.table} ${gb(t.bytes)}`).join(', ')}.`,
    '',
    '| route | conns | req/s | p50 ms | p99 ms | errors | statements | slowest statement ms | its buffers | seq scans |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| \`${row.route}\` | ${row.connections} | ${f(row.rps)} | ${f(row.p50)} | ${f(row.p99)} | ${row.errors} | ${row.statements} | ${row.slowestStatementMs.toFixed(2)} | ${row.slowestStatementBuffers} | ${row.seqScans.join(', ') || 'none'} |`,
    ),
    '',
    `Slowest read by p99: \`${worst.route}\` (${f(worst.p99)} ms). Its slowest statement (${worstPlan?.milliseconds.toFixed(2) ?? '-'} ms):`,
    '',
    '```',
    worstPlan?.statement ?? '',
    '',
    worstPlan?.plan ?? '',
    '```',
    '',
  ].join('\n')
  writeFileSync(new URL(`${file}.md`, import.meta.url), markdown)
  console.log(`\n${markdown}`)
}
