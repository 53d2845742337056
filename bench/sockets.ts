/**
 * `npm run bench:sockets [-- --sockets 10000 --receivers 1000 --messages 2000 --concurrency 10
 * --clients 5 --heartbeat 2 --window 20]`: one API instance on PostgreSQL (DATABASE_URL), started
 * as `npm start` starts it, holding `--sockets` chat sockets opened by `--clients` processes of
 * test clients (bench/socket-clients.ts). It measures, from the server's own figures:
 * - memory per idle socket: RSS, heap used and external after a full collection, before and after
 *   opening the sockets, divided by the sockets opened;
 * - heartbeat cost: the server's CPU time over `--window` seconds with no socket, then with every
 *   socket open and idle, the heartbeat every `--heartbeat` seconds (WS_HEARTBEAT_SECONDS);
 * - fan-out: `--messages` messages to `--receivers` of the sockets (one sender each, without a
 *   socket), `--concurrency` at a time across the client processes: the time from sending
 *   `POST /messages` to the frame arriving on the recipient's socket;
 * - the per-person cap: one user opens WS_MAX_SOCKETS_PER_USER + 1 sockets once the others are
 *   open; the last must be refused (429), the others must stay open to the end, and one more
 *   attempt at the end must be refused too.
 * With `--snapshot`, heap snapshots of the server before and after opening the sockets say which
 * constructors the sockets' heap is made of (the growth per socket, by constructor).
 * The npm script raises the open-file limit to what the machine allows. Results go to
 * bench/results/<date>-sockets-postgres.json and .md. Exits 1 when the cap does not hold or a
 * socket is lost; the fan-out goal (p99 under 50 ms) is reported, not enforced.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { summariseHeapSnapshot } from './support/heap-snapshot.ts'
import { freePort, megabytes, openFileLimit, productionEnvironment, startApi, type MeasuredProcess, type ProcessUsage } from './support/processes.ts'
import { createBenchUsers, inProcessBenchConfig, percentile } from './support/users.ts'

const { values } = parseArgs({
  options: {
    sockets: { type: 'string', default: '10000' },
    receivers: { type: 'string', default: '1000' },
    messages: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '10' },
    clients: { type: 'string', default: '5' },
    heartbeat: { type: 'string', default: '2' },
    window: { type: 'string', default: '20' },
    snapshot: { type: 'boolean', default: false },
  },
})
const { snapshot: withSnapshots, ...numeric } = values
const options = Object.fromEntries(Object.entries(numeric).map(([key, value]) => [key, Number(value)])) as Record<keyof typeof numeric, number>
if (!Object.values(options).every((value) => Number.isSafeInteger(value) && value > 0) || options.receivers > options.sockets || options.concurrency < options.clients) {
  console.error('every option must be a positive whole number, --receivers at most --sockets, --concurrency at least --clients')
  process.exit(2)
}
const { database: target } = loadConfig()
if (target.kind !== 'postgres') {
  console.error('bench:sockets measures the API on PostgreSQL: set DATABASE_URL (a database of its own)')
  process.exit(2)
}
const serverEnv = productionEnvironment(target, {
  // Required in production; nothing here sends mail (every recipient holds a socket).
  SMTP_URL: 'smtp://127.0.0.1:2',
  RUN_WORKER: 'false',
  // The default level logs every request: 10,000 upgrades would be measured as much as the sockets.
  LOG_LEVEL: 'warn',
  RATE_LIMIT_GENERAL: '1000000',
  WS_HEARTBEAT_SECONDS: String(options.heartbeat),
})
const loaded = loadConfig(serverEnv)
const cap = loaded.realtime.maxSocketsPerUser
const fileLimit = openFileLimit()
const startedAt = new Date()
const load = () => loadavg().map((value) => value.toFixed(2)).join(' ')
console.log(`${startedAt.toISOString()}: ${cpus().length} cores, ${megabytes(totalmem())} MB, Node ${process.versions.node}, load average ${load()}, open-file limit ${fileLimit}`)

// Accounts and sessions, made in this process before the server starts.
const setup = inProcessBenchConfig(loaded)
const database = await openMigratedDatabase(setup.database)
const app = await buildApp({ config: setup, database })
await app.ready()
const seedStarted = performance.now()
const holders = await createBenchUsers(app.container, { count: options.sockets, label: 'socket', concurrency: 10 })
const senders = await createBenchUsers(app.container, { count: options.receivers, label: 'sender', concurrency: 10 })
const [capped] = await createBenchUsers(app.container, { count: 1, label: 'capped' })
await app.close()
await database.close()
console.log(`${holders.length + senders.length + 1} accounts with a session in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`)

class Clients {
  private next = 0
  private readonly pending = new Map<number, (answer: unknown) => void>()
  constructor(readonly child: ChildProcess) {
    child.on('message', (message: { reply: number }) => {
      this.pending.get(message.reply)?.(message)
      this.pending.delete(message.reply)
    })
  }
  ask<T>(command: Record<string, unknown>): Promise<T> {
    const id = this.next++
    return new Promise((resolve) => {
      this.pending.set(id, resolve as (answer: unknown) => void)
      this.child.send({ id, ...command })
    })
  }
}

const port = await freePort()
const server = await startApi('api', { ...serverEnv, PORT: String(port) })
const clients = Array.from({ length: options.clients }, () => new Clients(fork(new URL('./socket-clients.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] })))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The server's CPU time over the window, in ms of CPU per second of wall time. */
async function cpuOver(seconds: number) {
  const before = await server.usage()
  const wallStarted = performance.now()
  await sleep(seconds * 1000)
  const after = await server.usage()
  const cpuMs = (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000
  return { cpuMs, perSecond: cpuMs / ((performance.now() - wallStarted) / 1000), loopDelayMaxMs: after.loopDelayMaxMs }
}
/** Self size and count per constructor of the server's heap, written to a temporary file and read back. */
async function heapGroups() {
  const directory = mkdtempSync(join(tmpdir(), 'sockets-bench-'))
  try {
    const { groups } = summariseHeapSnapshot(await server.snapshot(join(directory, 'server.heapsnapshot')), Number.POSITIVE_INFINITY)
    return new Map(groups.map((group) => [group.name, group]))
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}
/** The constructors that grew most between two heaps, per socket. */
function growth(before: Awaited<ReturnType<typeof heapGroups>>, after: Awaited<ReturnType<typeof heapGroups>>, sockets: number) {
  return [...after.values()]
    .map((group) => ({ name: group.name, countPerSocket: (group.count - (before.get(group.name)?.count ?? 0)) / sockets, bytesPerSocket: (group.selfSize - (before.get(group.name)?.selfSize ?? 0)) / sockets }))
    .sort((a, b) => b.bytesPerSocket - a.bytesPerSocket)
    .slice(0, 15)
}
const memoryOf = (usage: ProcessUsage) => ({ rss: usage.memory.rss, heapUsed: usage.memory.heapUsed, external: usage.memory.external })

try {
  // Past the start's own work (compilation, the first collections) before the quiet window.
  await sleep(5000)
  const idleCpu = await cpuOver(options.window)
  const before = memoryOf(await server.usageAfterGc())
  const heapBefore = withSnapshots ? await heapGroups() : undefined

  // Each client process holds a contiguous slice of the socket holders.
  const slice = Math.ceil(options.sockets / options.clients)
  const slices = clients.map((_, index) => holders.slice(index * slice, (index + 1) * slice))
  const openStarted = performance.now()
  const opened = await Promise.all(clients.map((client, index) => client.ask<{ opened: number; refused: Record<string, number> }>({ cmd: 'open', port, users: slices[index], parallel: 50 })))
  const openSeconds = (performance.now() - openStarted) / 1000
  const openCount = opened.reduce((total, { opened }) => total + opened, 0)
  const refused = opened.map(({ refused }) => refused)
  console.log(`${openCount} of ${options.sockets} sockets open in ${openSeconds.toFixed(1)} s${openCount < options.sockets ? `; refused: ${JSON.stringify(refused)}` : ''}`)

  await sleep(3000)
  const after = memoryOf(await server.usageAfterGc())
  const perSocket = { rss: (after.rss - before.rss) / openCount, heapUsed: (after.heapUsed - before.heapUsed) / openCount, external: (after.external - before.external) / openCount }
  const heapGrowth = heapBefore ? growth(heapBefore, await heapGroups(), openCount) : []
  for (const group of heapGrowth) console.log(`  ${group.name}: ${group.bytesPerSocket.toFixed(0)} bytes, ${group.countPerSocket.toFixed(2)} per socket`)
  console.log(`memory per idle socket: RSS ${(perSocket.rss / 1024).toFixed(1)} KB, heap ${(perSocket.heapUsed / 1024).toFixed(1)} KB, external ${(perSocket.external / 1024).toFixed(1)} KB (RSS ${megabytes(before.rss)} -> ${megabytes(after.rss)} MB, heap ${megabytes(before.heapUsed)} -> ${megabytes(after.heapUsed)} MB)`)

  // The cap, while every other socket is open: cap + 1 attempts by one user, one after the other.
  const capClient = clients[0]!
  const capFirst = await capClient.ask<{ outcomes: (string | number)[] }>({ cmd: 'cap', port, user: capped, count: cap + 1 })
  console.log(`cap of ${cap} per person, ${cap + 1} attempts: ${capFirst.outcomes.join(', ')}`)

  // The opening's own aftermath (collections, compilation) settles before the quiet window.
  await sleep(10_000)
  const loadedCpu = await cpuOver(options.window)
  const rounds = options.window / options.heartbeat
  const perRoundMs = (loadedCpu.cpuMs - idleCpu.cpuMs) / rounds
  console.log(`server CPU: ${idleCpu.perSecond.toFixed(1)} ms/s with no socket, ${loadedCpu.perSecond.toFixed(1)} ms/s with ${openCount} idle (heartbeat every ${options.heartbeat} s): ${perRoundMs.toFixed(1)} ms per heartbeat round, ${((perRoundMs * 1000) / openCount).toFixed(1)} µs per socket; the event loop held at most ${idleCpu.loopDelayMaxMs.toFixed(0)} ms at once with no socket, ${loadedCpu.loopDelayMaxMs.toFixed(0)} ms with them`)

  // Fan-out: receivers spread evenly over the holders (so over every client process), one sender each.
  const step = Math.floor(options.sockets / options.receivers)
  const pairsOf = clients.map(() => [] as { senderToken: string; recipientId: string }[])
  for (let index = 0; index < options.receivers; index++) {
    const holder = index * step
    pairsOf[Math.floor(holder / slice)]!.push({ senderToken: senders[index]!.token, recipientId: holders[holder]!.id })
  }
  const sendAll = (messages: number, label: string) =>
    Promise.all(
      clients.map((client, index) => {
        const share = Math.round((messages * pairsOf[index]!.length) / options.receivers)
        const concurrency = Math.max(1, Math.round((options.concurrency * pairsOf[index]!.length) / options.receivers))
        return client.ask<{ latencies: number[]; failures: number; failure?: string }>({ cmd: 'send', port, pairs: pairsOf[index], messages: share, concurrency, label })
      }),
    )
  // Warm-up: each pair's conversation starts with one message.
  await sendAll(options.receivers, 'warm')
  const fanOutCpuBefore = await server.usage()
  const fanOutStarted = performance.now()
  const sent = await sendAll(options.messages, 'measure')
  const fanOutSeconds = (performance.now() - fanOutStarted) / 1000
  const fanOutCpuAfter = await server.usage()
  const fanOutLoopDelayMaxMs = fanOutCpuAfter.loopDelayMaxMs
  const latencies = sent.flatMap(({ latencies }) => latencies).sort((a, b) => a - b)
  const failures = sent.reduce((total, { failures }) => total + failures, 0)
  const fanOut = { messages: latencies.length, failures, perSecond: latencies.length / fanOutSeconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? Number.NaN }
  const fanOutCpuShare = (fanOutCpuAfter.cpu.user + fanOutCpuAfter.cpu.system - fanOutCpuBefore.cpu.user - fanOutCpuBefore.cpu.system) / 1000 / (fanOutSeconds * 1000)
  console.log(
    `fan-out to ${options.receivers} receiving sockets of ${openCount}: ${fanOut.messages} messages, ${options.concurrency} at a time: ${fanOut.perSecond.toFixed(0)}/s, p50 ${fanOut.p50.toFixed(1)} ms, p99 ${fanOut.p99.toFixed(1)} ms, max ${fanOut.max.toFixed(1)} ms, ${failures} failed${sent.find((one) => one.failure)?.failure ? ` (${sent.find((one) => one.failure)!.failure})` : ''}; server CPU ${(fanOutCpuShare * 100).toFixed(0)} % of a core, the event loop held at most ${fanOutLoopDelayMaxMs.toFixed(0)} ms at once`,
  )

  // Throughout: the capped user still holds exactly the cap, one more is still refused, no socket was lost.
  const capLast = await capClient.ask<{ outcomes: (string | number)[] }>({ cmd: 'cap', port, user: capped, count: 1 })
  const counts = await Promise.all(clients.map((client) => client.ask<{ open: number; capOpen: number; closedSinceOpen: number }>({ cmd: 'count' })))
  const stillOpen = counts.reduce((total, { open }) => total + open, 0)
  const capOpen = counts.reduce((total, { capOpen }) => total + capOpen, 0)
  const lost = counts.reduce((total, { closedSinceOpen }) => total + closedSinceOpen, 0)
  const capHeld = capFirst.outcomes.slice(0, cap).every((outcome) => outcome === 'open') && capFirst.outcomes[cap] === 429 && capLast.outcomes[0] === 429 && capOpen === cap
  console.log(`at the end: ${stillOpen} of ${openCount} sockets open, ${lost} closed since opening; the capped user holds ${capOpen}, one more attempt: ${capLast.outcomes[0]}; cap ${capHeld ? 'held' : 'NOT held'}`)
  const goal = fanOut.p99 < 50
  console.log(`fan-out goal (p99 under 50 ms): ${goal ? 'met' : 'NOT met'}; load average at the end ${load()}`)

  const stamp = startedAt.toISOString().slice(0, 16).replace(/[T:]/g, '-')
  const result = {
    date: startedAt.toISOString(),
    node: process.versions.node,
    cores: cpus().length,
    loadAverage: { start: loadavg(), end: loadavg() },
    fileLimit,
    options,
    sockets: { requested: options.sockets, opened: openCount, refused, openSeconds, stillOpen, lost },
    memory: { before, after, perSocket, heapGrowth },
    heartbeat: { seconds: options.heartbeat, window: options.window, idleCpuMsPerSecond: idleCpu.perSecond, loadedCpuMsPerSecond: loadedCpu.perSecond, idleLoopDelayMaxMs: idleCpu.loopDelayMaxMs, loadedLoopDelayMaxMs: loadedCpu.loopDelayMaxMs, perRoundMs, perSocketMicroseconds: (perRoundMs * 1000) / openCount },
    fanOut: { ...fanOut, concurrency: options.concurrency, receivers: options.receivers, serverCpuShare: fanOutCpuShare, loopDelayMaxMs: fanOutLoopDelayMaxMs },
    cap: { cap, first: capFirst.outcomes, last: capLast.outcomes, capOpen, held: capHeld },
  }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
  writeFileSync(new URL(`./results/${stamp}-sockets-postgres.json`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
  writeFileSync(
    new URL(`./results/${stamp}-sockets-postgres.md`, import.meta.url),
    [
      `# bench:sockets, ${result.date}`,
      '',
      `Node ${result.node}, ${result.cores} cores, load average ${load()} at the end, open-file limit ${fileLimit}; options ${JSON.stringify(options)}.`,
      '',
      '| figure | value |',
      '|---|---|',
      `| sockets open | ${openCount} of ${options.sockets} in ${openSeconds.toFixed(1)} s (${stillOpen} still open at the end, ${lost} closed) |`,
      `| memory per idle socket (after a full collection) | RSS ${kb(perSocket.rss)}, heap used ${kb(perSocket.heapUsed)}, external ${kb(perSocket.external)} |`,
      `| server before / after opening | RSS ${megabytes(before.rss)} / ${megabytes(after.rss)} MB, heap used ${megabytes(before.heapUsed)} / ${megabytes(after.heapUsed)} MB |`,
      `| server CPU, no socket / ${openCount} idle (heartbeat ${options.heartbeat} s) | ${idleCpu.perSecond.toFixed(1)} / ${loadedCpu.perSecond.toFixed(1)} ms per s; ${perRoundMs.toFixed(1)} ms per round, ${result.heartbeat.perSocketMicroseconds.toFixed(1)} µs per socket; event loop held at most ${idleCpu.loopDelayMaxMs.toFixed(0)} / ${loadedCpu.loopDelayMaxMs.toFixed(0)} ms |`,
      `| fan-out, ${options.receivers} receivers, ${options.concurrency} at a time | ${fanOut.perSecond.toFixed(0)}/s, p50 ${fanOut.p50.toFixed(1)} ms, p99 ${fanOut.p99.toFixed(1)} ms, max ${fanOut.max.toFixed(1)} ms, ${failures} failed; server CPU ${(fanOutCpuShare * 100).toFixed(0)} % of a core, event loop held at most ${fanOutLoopDelayMaxMs.toFixed(0)} ms |`,
      `| cap ${cap} per person | attempts: ${capFirst.outcomes.join(', ')}; at the end ${capOpen} open, one more: ${capLast.outcomes[0]} (${capHeld ? 'held' : 'NOT held'}) |`,
      ...(heapGrowth.length > 0 ? ['', 'Heap growth per socket, by constructor (heap snapshots before and after opening):', '', '| constructor or kind | bytes per socket | count per socket |', '|---|---|---|', ...heapGrowth.map((group) => `| ${group.name} | ${group.bytesPerSocket.toFixed(0)} | ${group.countPerSocket.toFixed(2)} |`)] : []),
      '',
    ].join('\n'),
  )
  console.log(`results: bench/results/${stamp}-sockets-postgres.json and .md`)
  if (!capHeld || stillOpen < openCount || lost > 0) process.exitCode = 1
} finally {
  await Promise.all(clients.map((client) => client.ask({ cmd: 'close' }).catch(() => undefined)))
  await stopServer(server)
}

async function stopServer(process: MeasuredProcess) {
  const code = await process.stop()
  if (code !== 0) console.log(`the server exited with ${code}`)
}
