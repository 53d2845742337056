/**
 * `npm run bench:memory [-- --requests 5000 --concurrency 20 --keep-snapshots]`: the resident
 * memory of the processes as production starts them (see support/processes.ts): the API on
 * PostgreSQL (DATABASE_URL, a database of its own) with the standalone worker beside it, and the
 * API on the embedded PGlite database (a fresh DATA_DIR, its worker in-process as deployed so).
 * For each: RSS, heap used and external after a full collection, idle (started, nothing asked)
 * and loaded (after `--requests` mixed requests from this process: catalogue reads, sign-ins,
 * order placements; the worker after it has handled the events they raised). Then a heap
 * snapshot of each loaded process, summarised by constructor. Every figure is checked against
 * BUDGET (the same numbers as docs/performance.md); the bench exits 1 naming each figure over it.
 * Without DATABASE_URL only PGlite is measured. Results: bench/results/<date>-memory.json and .md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { SMTPServer } from 'smtp-server'
import type { Actor } from '../src/access/access.ts'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { categories } from '../src/modules/catalogue/categories.table.ts'
import { summariseHeapSnapshot, type HeapSummary } from './support/heap-snapshot.ts'
import { freePort, megabytes, productionEnvironment, startApi, startWorker, type MeasuredProcess } from './support/processes.ts'
import { BENCH_PASSWORD, createBenchUsers, inProcessBenchConfig, percentile } from './support/users.ts'

type Figure = 'rss' | 'heapUsed' | 'external'
type Target = 'api-postgres' | 'worker-postgres' | 'api-pglite'
/**
 * Megabytes, after a full collection; docs/performance.md "Memory" holds the same table and why.
 * Heap used is close to deterministic and gets about a fifth over the figures of 2026-11-28; RSS
 * also holds what the allocator and the young generation (64 MB semi-spaces for the API) kept
 * from the start's peak, which varies by a hundred megabytes from run to run, hence its margin.
 */
const BUDGET: Record<Target, Record<'idle' | 'loaded', Record<Figure, number>>> = {
  'api-postgres': { idle: { rss: 360, heapUsed: 85, external: 16 }, loaded: { rss: 400, heapUsed: 90, external: 16 } },
  'worker-postgres': { idle: { rss: 360, heapUsed: 60, external: 16 }, loaded: { rss: 360, heapUsed: 60, external: 16 } },
  'api-pglite': { idle: { rss: 720, heapUsed: 95, external: 240 }, loaded: { rss: 760, heapUsed: 100, external: 240 } },
}

const { values } = parseArgs({ options: { requests: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '20' }, 'keep-snapshots': { type: 'boolean', default: false } } })
const [requestCount, concurrency] = [Number(values.requests), Number(values.concurrency)]
if (![requestCount, concurrency].every((value) => Number.isSafeInteger(value) && value > 0)) {
  console.error('--requests and --concurrency must be positive whole numbers')
  process.exit(2)
}

// Production requires SMTP; the worker's mail goes to this process, which accepts and drops it.
const smtpPort = await freePort()
const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false, onData: (stream, _session, done) => stream.on('end', () => done()).resume() })
await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', resolve))
const extraEnv = { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, RATE_LIMIT_GENERAL: '1000000', RATE_LIMIT_AUTH: '1000000' }
const { database: configured } = loadConfig()
const stamp = new Date().toISOString().slice(0, 16).replace(/[T:]/g, '-')
const snapshots = mkdtempSync(join(tmpdir(), 'memory-bench-'))
const load = () => loadavg().map((value) => value.toFixed(2)).join(' ')
console.log(`${new Date().toISOString()}: ${cpus().length} cores, Node ${process.versions.node}, load average ${load()}; ${requestCount} requests, ${concurrency} at a time`)

interface Fixture {
  offers: { serviceId: string; packageId: string }[]
  buyers: { email: string; token: string }[]
}

/** Twenty active services and fifty funded buyers with a session, made through the services. */
async function prepare(env: Record<string, string>): Promise<Fixture> {
  const config = inProcessBenchConfig(loadConfig(env))
  const database = await openMigratedDatabase(config.database)
  const app = await buildApp({ config, database })
  await app.ready()
  const { container } = app
  try {
    const [category] = await container.db.select({ id: categories.id }).from(categories).limit(1)
    if (!category) throw new Error('no category: the migrations add the default ones')
    const sellers = await createBenchUsers(container, { count: 20, label: 'memory-seller' })
    const offers: Fixture['offers'] = []
    for (const [index, seller] of sellers.entries()) {
      const actor: Actor = { id: seller.id, email: seller.email, fullName: `Bench memory-seller ${index}`, isStaff: false, isSuperuser: false, permissions: new Set() }
      const service = await container.catalogue.createService(actor, {
        title: `Memory bench service number ${index}`,
        description: 'A service created by the memory benchmark, long enough to be valid.',
        categoryId: category.id,
        packages: [{ name: 'Basic', price: 25, deliveryDays: 3, revisions: 1 }],
      })
      await container.catalogue.approveService(actor, service.id)
      offers.push({ serviceId: service.id, packageId: service.packages[0]!.id })
    }
    const buyers = await createBenchUsers(container, { count: 50, label: 'memory-buyer' })
    for (const buyer of buyers) {
      await container.db.transaction((tx) =>
        container.wallet.ledger.transfer(tx, { from: { platform: 'external' }, to: { userId: buyer.id, kind: 'available' }, amountCents: 100_000_000, type: 'adjustment', description: 'bench funds' }),
      )
    }
    return { offers, buyers }
  } finally {
    await app.close()
    await database.close()
  }
}

/** One request of the mix, by its index: 5 % sign-ins, 20 % orders, the rest catalogue reads. */
function requestOf(base: string, fixture: Fixture, index: number): [string, RequestInit, number] {
  const slot = index % 20
  const buyer = fixture.buyers[index % fixture.buyers.length]!
  const offer = fixture.offers[index % fixture.offers.length]!
  const json = (body: unknown, token?: string): RequestInit => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } })
  if (slot === 0) return [`${base}/auth/login`, json({ email: buyer.email, password: BENCH_PASSWORD }), 200]
  if (slot <= 4) return [`${base}/orders`, json({ ...offer, requirements: 'Memory bench order' }, buyer.token), 201]
  if (slot <= 9) return [`${base}/services/${offer.serviceId}`, {}, 200]
  if (slot <= 14) return [`${base}/services?limit=20&sortBy=price`, {}, 200]
  if (slot <= 17) return [`${base}/categories`, {}, 200]
  return [`${base}/services?search=${encodeURIComponent('memory bench')}`, {}, 200]
}

async function loadApi(port: number, fixture: Fixture) {
  const base = `http://127.0.0.1:${port}/api/v1`
  const latencies: number[] = []
  const unexpected: Record<string, number> = {}
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requestCount) {
        const [url, init, expected] = requestOf(base, fixture, next++)
        const sent = performance.now()
        const response = await fetch(url, init)
        await response.arrayBuffer()
        latencies.push(performance.now() - sent)
        if (response.status !== expected) unexpected[`${init.method ?? 'GET'} ${new URL(url).pathname.replace(/[0-9a-f-]{36}/, '{id}')} ${response.status}`] = (unexpected[`${init.method ?? 'GET'} ${new URL(url).pathname.replace(/[0-9a-f-]{36}/, '{id}')} ${response.status}`] ?? 0) + 1
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  const seconds = (performance.now() - started) / 1000
  return { requests: requestCount, perSecond: requestCount / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), unexpected }
}

interface Measured {
  target: Target
  idle: Record<Figure, number>
  loaded: Record<Figure, number>
  heap: HeapSummary
}

const figuresOf = async (process: MeasuredProcess): Promise<Record<Figure, number>> => {
  const { memory } = await process.usageAfterGc()
  return { rss: megabytes(memory.rss), heapUsed: megabytes(memory.heapUsed), external: megabytes(memory.external) }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function snapshotOf(process: MeasuredProcess, target: Target): Promise<Measured['heap']> {
  const path = await process.snapshot(join(snapshots, `${target}.heapsnapshot`))
  const summary = summariseHeapSnapshot(path)
  if (!values['keep-snapshots']) rmSync(path)
  return summary
}

/** Starts the processes, measures them idle, loads the API, measures them loaded, snapshots them. */
async function measure(kind: 'postgres' | 'pglite', env: Record<string, string>, fixture: Fixture): Promise<{ measured: Measured[]; load: Awaited<ReturnType<typeof loadApi>> }> {
  const port = await freePort()
  const api = await startApi(`api-${kind}`, { ...env, PORT: String(port) })
  let worker: MeasuredProcess | undefined
  try {
    if (kind === 'postgres') worker = await startWorker('worker-postgres', env)
    await sleep(5000)
    const idle = { api: await figuresOf(api), worker: worker && (await figuresOf(worker)) }
    const loadFigures = await loadApi(port, fixture)
    // The worker handles what the load raised (the orders' events and mail) before it is measured.
    await sleep(15_000)
    const loaded = { api: await figuresOf(api), worker: worker && (await figuresOf(worker)) }
    const measured: Measured[] = [{ target: `api-${kind}`, idle: idle.api, loaded: loaded.api, heap: await snapshotOf(api, `api-${kind}`) }]
    if (worker) measured.push({ target: 'worker-postgres', idle: idle.worker!, loaded: loaded.worker!, heap: await snapshotOf(worker, 'worker-postgres') })
    return { measured, load: loadFigures }
  } finally {
    await api.stop()
    await worker?.stop()
  }
}

const results: { kind: string; load: Awaited<ReturnType<typeof loadApi>>; measured: Measured[] }[] = []
try {
  if (configured.kind === 'postgres') {
    // The API beside a standalone worker, as a deployment on PostgreSQL runs them.
    const env = productionEnvironment(configured, { ...extraEnv, RUN_WORKER: 'false' })
    results.push({ kind: 'postgres', ...(await measure('postgres', env, await prepare(env))) })
  } else console.log('DATABASE_URL is not set: PostgreSQL and the standalone worker are not measured')
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-bench-pglite-'))
  try {
    const env = productionEnvironment({ kind: 'pglite', dataDir }, extraEnv)
    results.push({ kind: 'pglite', ...(await measure('pglite', env, await prepare(env))) })
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
} finally {
  smtp.close()
  if (!values['keep-snapshots']) rmSync(snapshots, { recursive: true, force: true })
  else console.log(`heap snapshots kept in ${snapshots}`)
}

const cell = (text: string) => text.replace(/\|/g, '\\|').slice(0, 80)
const over: string[] = []
const lines: string[] = [`# bench:memory, ${stamp}`, '', `Node ${process.versions.node}, ${cpus().length} cores, load average ${load()} at the end; ${requestCount} requests, ${concurrency} at a time. Megabytes after a full collection; budget in brackets.`, '']
lines.push('| process | state | RSS | heap used | external |', '|---|---|---|---|---|')
for (const { measured } of results) {
  for (const one of measured) {
    for (const state of ['idle', 'loaded'] as const) {
      const cells = (['rss', 'heapUsed', 'external'] as const).map((figure) => {
        const [value, budget] = [one[state][figure], BUDGET[one.target][state][figure]]
        if (value > budget) over.push(`${one.target} ${state} ${figure}: ${value} MB, budget ${budget} MB`)
        return `${value} (${budget})${value > budget ? ' OVER' : ''}`
      })
      lines.push(`| ${one.target} | ${state} | ${cells.join(' | ')} |`)
    }
  }
}
for (const { kind, load: figures } of results) {
  lines.push('', `Load on ${kind}: ${figures.requests} requests at ${figures.perSecond.toFixed(0)}/s, p50 ${figures.p50.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms; unexpected answers: ${JSON.stringify(figures.unexpected)}`)
}
for (const { measured } of results) {
  for (const one of measured) {
    lines.push('', `## ${one.target}, loaded: heap snapshot, ${megabytes(one.heap.totalSelfSize)} MB in ${one.heap.nodes} nodes`, '', '| constructor or kind | count | self size MB |', '|---|---|---|')
    for (const group of one.heap.groups) lines.push(`| ${cell(group.name)} | ${group.count} | ${megabytes(group.selfSize)} |`)
    const strings = one.heap.strings.reduce((total, { selfSize }) => total + selfSize, 0)
    lines.push('', `Its largest strings (${megabytes(strings)} MB together):`, '', '| self size KB | starts with |', '|---|---|')
    for (const string of one.heap.strings) lines.push(`| ${(string.selfSize / 1024).toFixed(0)} | ${cell(JSON.stringify(string.start))} |`)
  }
}
lines.push('', over.length === 0 ? 'Every figure is within its budget.' : `Over budget:\n${over.map((line) => `- ${line}`).join('\n')}`, '')
console.log(lines.join('\n'))
mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
writeFileSync(new URL(`./results/${stamp}-memory.json`, import.meta.url), `${JSON.stringify({ date: stamp, node: process.versions.node, loadAverage: loadavg(), requestCount, concurrency, budget: BUDGET, results, over }, null, 2)}\n`)
writeFileSync(new URL(`./results/${stamp}-memory.md`, import.meta.url), lines.join('\n'))
if (over.length > 0) process.exitCode = 1
