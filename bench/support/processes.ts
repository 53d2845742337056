/**
 * The measured processes, started as production starts them: the command of package.json's
 * `start` (the API) or `cli` + `worker` (the worker), run by this bench's own Node binary, with
 * one addition: the probe (process-probe.ts), reached over an IPC channel, which reports the
 * process's memory and CPU time and writes heap snapshots on request.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { DatabaseConfig } from '../../src/config.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const probeModule = fileURLToPath(new URL('./process-probe.ts', import.meta.url))

export interface ProcessUsage {
  memory: NodeJS.MemoryUsage
  /** CPU time since the process started, in microseconds. */
  cpu: NodeJS.CpuUsage
  uptime: number
  /** The longest event-loop delay since the previous report, in ms (resolution 10 ms). */
  loopDelayMaxMs: number
}

/** The node arguments of an npm script (`exec node <args>`), with the probe imported after tsx unless `probe` is false. */
export function scriptArguments(script: 'start' | 'cli', probe = true): string[] {
  const scripts = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts
  const words = scripts[script]!.replace(/^exec /, '').split(/\s+/)
  if (words[0] !== 'node') throw new Error(`package.json's "${script}" no longer starts with node: update bench/support/processes.ts`)
  const args = words.slice(1)
  if (probe) args.splice(args.indexOf('tsx') + 1, 0, '--import', probeModule)
  return args
}

/**
 * The whole environment of a measured process, and nothing of the caller's (so the figures do not
 * depend on the shell they were run from): production mode, fresh secrets, the database given,
 * and `extra`. The bench passes the same object to `loadConfig` for its own set-up,
 * so that both sign and verify the same tokens.
 */
export function productionEnvironment(database: DatabaseConfig, extra: Record<string, string>): Record<string, string> {
  const secret = () => randomBytes(48).toString('base64url')
  return {
    NODE_ENV: 'production',
    ...(database.kind === 'postgres' ? { DATABASE_URL: database.url, DATABASE_POOL_SIZE: String(database.poolSize) } : { DATA_DIR: database.dataDir }),
    JWT_ACCESS_SECRET: secret(),
    JWT_REFRESH_SECRET: secret(),
    FILE_SIGNING_SECRET: secret(),
    HOST: '127.0.0.1',
    ...extra,
  }
}

/** The open-file limit this process runs under (its children inherit it). */
export const openFileLimit = (): number => Number(execFileSync('bash', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim())

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

export class MeasuredProcess {
  private next = 0
  private readonly pending = new Map<number, (answer: unknown) => void>()
  readonly output: string[] = []

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.on('message', (message: { probe?: number }) => {
      if (typeof message?.probe !== 'number') return
      this.pending.get(message.probe)?.(message)
      this.pending.delete(message.probe)
    })
    const keep = (chunk: Buffer) => {
      this.output.push(chunk.toString('utf8'))
      if (this.output.length > 200) this.output.shift()
    }
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
  }

  private ask<T>(cmd: 'usage' | 'gc' | 'snapshot', path?: string): Promise<T> {
    const id = this.next++
    return new Promise((resolve, reject) => {
      if (this.child.exitCode !== null) return reject(new Error(`${this.name} has exited: ${this.output.join('').slice(-2000)}`))
      this.pending.set(id, resolve as (answer: unknown) => void)
      this.child.send({ id, cmd, path })
    })
  }

  /** Memory and CPU time as they are. */
  usage = () => this.ask<ProcessUsage>('usage')
  /** Memory and CPU time after a full collection. */
  usageAfterGc = () => this.ask<ProcessUsage>('gc')
  snapshot = async (path: string) => (await this.ask<{ path: string }>('snapshot', path)).path

  /** SIGTERM, as a platform stops it; then SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 15_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)))
    if (this.child.connected) this.child.disconnect()
    this.child.kill('SIGTERM')
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs)
    const code = await exited
    clearTimeout(timer)
    return code
  }
}

function launch(name: string, args: string[], env: Record<string, string>): MeasuredProcess {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  return new MeasuredProcess(name, child)
}

/** Whether the API on `port` answers `/health`. */
export const answersHealth = (port: string | number): Promise<boolean> => fetch(`http://127.0.0.1:${port}/health`).then((response) => response.ok, () => false)

/**
 * Waits, checking every 200 ms, until `ready()` holds: true then, false after `ms`. Throws if the
 * process exits first, with the end of what it printed.
 */
export async function untilReady(name: string, child: ChildProcess, printed: () => string, ready: () => boolean | Promise<boolean>, ms = 120_000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${printed().slice(-2000)}`)
    if (await ready()) return true
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return false
}

/** `npm start` on `port`, resolved once `/health` answers. */
export async function startApi(name: string, env: Record<string, string> & { PORT: string }): Promise<MeasuredProcess> {
  const api = launch(name, scriptArguments('start'), env)
  if (await untilReady(name, api.child, () => api.output.join(''), () => answersHealth(env.PORT))) return api
  await api.stop()
  throw new Error(`${name} did not answer /health within 2 minutes: ${api.output.join('').slice(-2000)}`)
}

/** `npm run cli -- worker`, resolved once it logs that it started (at the level `info`, the default). */
export async function startWorker(name: string, env: Record<string, string>): Promise<MeasuredProcess> {
  const worker = launch(name, [...scriptArguments('cli'), 'worker'], env)
  if (await untilReady(name, worker.child, () => worker.output.join(''), () => worker.output.join('').includes('worker started'))) return worker
  await worker.stop()
  throw new Error(`${name} did not start within 2 minutes: ${worker.output.join('').slice(-2000)}`)
}

const MB = 1024 * 1024
export const megabytes = (bytes: number) => Math.round((bytes / MB) * 10) / 10
