/**
 * `npm run bench:instructions -- <path> [--warm 3000] [--measure 1500] [--connections 10]`
 *
 * The instructions the API's process executes per request of one route, counted by callgrind
 * (valgrind, Debian's package): the same figure run after run, whatever else the host is doing,
 * where req/s and CPU time move by tens of per cent on a shared host. The figure to compare two
 * versions of the HTTP platform with (run it in each checkout).
 *
 * The API starts as `npm start` starts it, in production mode with logging at `error` and rate
 * limits out of reach, without the worker, under `valgrind --tool=callgrind` with counting off.
 * `--warm` requests bring V8's compiled code to its steady state, a full garbage collection
 * clears what the warm-up left, then counting is on for `--measure` requests, from this process
 * over `--connections` keep-alive connections. V8 runs `--single-threaded` (compilation and
 * garbage collection on the main thread, so that they are counted and happen at the same points
 * each run); two runs of the same code agree within about half a per cent.
 *
 * `path` is under the API prefix (`/categories/graphics-design`, `/services/<id>`). DATABASE_URL
 * names the database (seeded: `npm run seed -- --services 100000`), DATA_DIR the embedded one.
 * A run takes a minute or two: valgrind runs the process about fifty times slower.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.ts'
import { API_PREFIX } from '../src/http/prefix.ts'
import { answersHealth, freePort, productionEnvironment, scriptArguments, untilReady } from './support/processes.ts'

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { warm: { type: 'string', default: '3000' }, measure: { type: 'string', default: '1500' }, connections: { type: 'string', default: '10' } },
})
const [path] = positionals
const [warm, measure, connections] = [options.warm, options.measure, options.connections].map(Number) as [number, number, number]
if (!path?.startsWith('/') || ![warm, measure, connections].every((value) => Number.isSafeInteger(value) && value > 0)) {
  console.error('usage: npm run bench:instructions -- <path under the API prefix> [--warm N] [--measure N] [--connections N]')
  process.exit(2)
}
/** A command's absolute path, looked up on the caller's PATH (the API runs with a clean environment). */
function commandPath(name: string): string {
  try {
    return execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim()
  } catch {
    console.error(`${name} is not installed (Debian: apt-get install valgrind)`)
    process.exit(2)
  }
}
const valgrind = commandPath('valgrind')
const callgrindControl = commandPath('callgrind_control')

const root = fileURLToPath(new URL('../', import.meta.url))
const collector = fileURLToPath(new URL('./support/collect-on-signal.ts', import.meta.url))
const port = await freePort()
const output = mkdtempSync(join(tmpdir(), 'instructions-'))
// The pipes callgrind_control talks through: in the run's own directory, so they go with it even
// though the API is killed, and named after the same user and host on both sides (valgrind
// reads LOGNAME, USER and HOST; the API runs with a clean environment).
const vgdbPrefix = `--vgdb-prefix=${join(output, 'vgdb')}`
const vgdbNames = { LOGNAME: 'bench', USER: 'bench', HOST: 'localhost' }
const env = productionEnvironment(loadConfig().database, {
  PORT: String(port),
  RUN_WORKER: 'false',
  LOG_LEVEL: 'error',
  RATE_LIMIT_GENERAL: '1000000',
  // Production needs a mail server named; nothing here sends mail.
  SMTP_URL: 'smtp://127.0.0.1:2',
  ...vgdbNames,
})
// As `npm start` runs it, V8 on one thread, with the collector imported before the server.
const nodeArguments = scriptArguments('start', false)
nodeArguments.splice(-1, 0, '--import', collector)
const api = spawn(
  valgrind,
  ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', vgdbPrefix, `--callgrind-out-file=${join(output, 'callgrind.out')}`, process.execPath, '--single-threaded', '--expose-gc', ...nodeArguments],
  { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
)
let printed = ''
api.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()))
api.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString()))

/** Waits for `ready()`, for at most `minutes` (valgrind starts the API slowly); fails if the API exits first. */
async function until(what: string, ready: () => boolean | Promise<boolean>, minutes: number): Promise<void> {
  if (!(await untilReady('the API', api, () => printed, ready, minutes * 60_000))) throw new Error(`the API did not ${what} within ${minutes} minutes`)
}

/** `count` GET requests over `connections` keep-alive connections, one after another on each. */
async function requests(count: number): Promise<Record<number, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const statuses: Record<number, number> = {}
  let left = count
  const one = () =>
    new Promise<void>((resolve, reject) => {
      http
        .get({ agent, host: '127.0.0.1', port, path: `${API_PREFIX}${path}` }, (response) => {
          statuses[response.statusCode ?? 0] = (statuses[response.statusCode ?? 0] ?? 0) + 1
          response.resume().on('end', resolve)
        })
        .on('error', reject)
    })
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (left > 0) {
        left--
        await one()
      }
    }),
  )
  agent.destroy()
  return statuses
}

/** The instructions of the first dump (the measured requests), once callgrind has written it. */
async function dumpedTotal(): Promise<string> {
  for (let tries = 0; tries < 120; tries++) {
    const dump = readdirSync(output).find((name) => name.endsWith('.1'))
    const totals = dump ? /^totals: (\d+)/m.exec(readFileSync(join(output, dump), 'utf8'))?.[1] : undefined
    if (totals) return totals
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error(`callgrind wrote no dump of the measured requests (files: ${readdirSync(output).join(', ')})`)
}

/** A callgrind_control command to the API; it says "OK" even when it reached nothing, so its output is read. */
function callgrind(...args: string[]): void {
  const names = Object.entries(vgdbNames).map(([name, value]) => `${name}=${value}`)
  const { stdout, stderr, status } = spawnSync('env', [...names, callgrindControl, vgdbPrefix, ...args, String(api.pid)], { encoding: 'utf8' })
  const said = `${stdout}${stderr}`
  if (status !== 0 || /error|no such/i.test(said)) throw new Error(`callgrind_control ${args.join(' ')}: ${said}`)
}

/** Fails unless every answer was a success: a wrong path would count the work of a 404. */
function allSucceeded(statuses: Record<number, number>): Record<number, number> {
  if (Object.keys(statuses).some((status) => !status.startsWith('2'))) throw new Error(`some answers were not successes: ${JSON.stringify(statuses)}`)
  return statuses
}

try {
  await until('answer /health', () => answersHealth(port), 5)
  const warmed = allSucceeded(await requests(warm))
  api.kill('SIGWINCH')
  await until('collect its garbage', () => printed.includes('collected'), 1)
  callgrind('--instr=on')
  const measured = allSucceeded(await requests(measure))
  callgrind('--dump')
  callgrind('--instr=off')
  const totals = await dumpedTotal()
  console.log(`GET ${API_PREFIX}${path}: ${Math.round(Number(totals) / measure).toLocaleString('en')} instructions per request (${measure} requests counted after ${warm}; answers ${JSON.stringify(measured)}, warm-up ${JSON.stringify(warmed)})`)
} catch (error) {
  console.error(`${String(error)}\nThe API printed:\n${printed.slice(-3000)}`)
  process.exitCode = 1
} finally {
  api.kill('SIGKILL')
  rmSync(output, { recursive: true, force: true })
}
