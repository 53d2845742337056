import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { loadConfig } from '../../src/config.ts'

/**
 * The container files are checked here because Docker may not run where the suite runs: a
 * hadolint-style reading of the Dockerfile, and the compose file read as Compose reads it (YAML
 * merge keys, `${VAR}` interpolation) with every app service's environment passed through the
 * real config loader. Where `docker compose` exists, it validates the file too.
 */
const root = join(import.meta.dirname, '..', '..')
const read = (file: string) => readFileSync(join(root, file), 'utf8')

interface Instruction {
  keyword: string
  args: string
}

function instructions(dockerfile: string): Instruction[] {
  const logical = dockerfile
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
  return logical
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/)
      return { keyword: keyword!.toUpperCase(), args: rest.join(' ') }
    })
}

describe('Dockerfile', () => {
  const all = instructions(read('Dockerfile'))
  const stages = all.reduce<Instruction[][]>((found, instruction) => {
    if (instruction.keyword === 'FROM') found.push([])
    found[found.length - 1]?.push(instruction)
    return found
  }, [])
  const final = stages[stages.length - 1]!

  it('builds in stages from a pinned Node 24 slim image, never `latest`', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const stage of stages) expect(stage[0]!.args).toMatch(/^node:24-slim( AS \w+)?$/i)
  })

  it('installs production dependencies only, from the lockfile', () => {
    const runs = all.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.args)
    expect(runs.some((run) => /npm ci\b.*--omit=dev/.test(run))).toBe(true)
    expect(runs.some((run) => /npm install\b/.test(run))).toBe(false)
  })

  it('runs as an unprivileged user, with a health check on /health and the server as PID 1 (exec form, so signals reach it)', () => {
    const keywords = final.map((instruction) => instruction.keyword)
    const user = final.find((instruction) => instruction.keyword === 'USER')
    expect(user?.args).toBeDefined()
    expect(['root', '0']).not.toContain(user!.args.split(':')[0])
    expect(keywords.indexOf('USER')).toBeLessThan(keywords.indexOf('CMD'))
    expect(final.find((instruction) => instruction.keyword === 'HEALTHCHECK')?.args).toContain('/health')
    const cmd = JSON.parse(final.find((instruction) => instruction.keyword === 'CMD')!.args) as string[]
    expect(cmd[0]).toBe('node')
    expect(cmd.slice(-3)).toEqual(['--import', 'tsx', 'src/server.ts'])
  })

  it('copies only files that exist, never from a URL, and leaves local state out of the build context', () => {
    for (const instruction of all) {
      expect(instruction.keyword).not.toBe('ADD')
      if (instruction.keyword !== 'COPY' || instruction.args.startsWith('--from')) continue
      const sources = instruction.args.split(/\s+/).slice(0, -1)
      for (const source of sources) expect(existsSync(join(root, source)), source).toBe(true)
    }
    const ignored = read('.dockerignore').split('\n')
    for (const entry of ['.git', 'node_modules', 'data', '.env']) expect(ignored).toContain(entry)
  })
})

/** Compose's interpolation: `${NAME}`, `${NAME:-default}` and `${NAME:?error}`. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_match, name: string, kind?: string, rest?: string) => {
    if (env[name]) return env[name]
    if (kind === '?') throw new Error(`${name}: ${rest}`)
    return kind === '-' ? (rest ?? '') : ''
  })
}

interface ComposeService {
  image?: string
  build?: unknown
  command?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }>
}

describe('docker-compose.yml', () => {
  const secrets = { JWT_ACCESS_SECRET: 'a'.repeat(48), JWT_REFRESH_SECRET: 'b'.repeat(48), FILE_SIGNING_SECRET: 'd'.repeat(48), METRICS_TOKEN: 'c'.repeat(24) }
  const compose = parse(interpolate(read('docker-compose.yml'), secrets), { merge: true }) as { services: Record<string, ComposeService> }
  const services = compose.services

  it('refuses to start without the JWT secrets', () => {
    expect(() => interpolate(read('docker-compose.yml'), {})).toThrow(/JWT_ACCESS_SECRET/)
  })

  it('runs two API instances behind the proxy, a separate worker, PostgreSQL behind PgBouncer, Redis, MinIO and Mailpit', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['api1', 'api2', 'worker', 'proxy', 'postgres', 'pgbouncer', 'redis', 'minio', 'mailpit']))
    for (const [name, service] of Object.entries(services)) {
      expect(service.image ?? service.build, name).toBeDefined()
      for (const dependency of Object.keys(service.depends_on ?? {})) expect(Object.keys(services), `${name} depends on ${dependency}`).toContain(dependency)
    }
    expect(services.api1!.environment!.RUN_WORKER).toBe('false')
    expect(services.api2!.environment!.RUN_WORKER).toBe('false')
    expect(services.worker!.command).toEqual(['node', '--import', 'tsx', 'src/cli.ts', 'worker'])
    expect(services.worker!.environment!.RUN_WORKER).toBeUndefined()
  })

  it('gives every app service an environment the config loader accepts, on PostgreSQL, Redis, S3 and SMTP', () => {
    for (const name of ['api1', 'api2', 'worker']) {
      const environment = { ...services[name]!.environment, DATA_DIR: mkdtempSync(join(tmpdir(), 'compose-config-')) }
      const config = loadConfig(environment)
      expect(config.isProduction, name).toBe(true)
      expect(config.database).toMatchObject({ kind: 'postgres', url: 'postgres://marketplace:marketplace@pgbouncer:6432/marketplace' })
      expect(config.redisUrl).toBe('redis://redis:6379')
      expect(config.storage).toMatchObject({ kind: 's3', bucket: 'marketplace', endpoint: 'http://minio:9000', forcePathStyle: true })
      expect(config.mail.smtpUrl).toBe('smtp://mailpit:1025')
      expect(config.trustProxy).toBe(true)
    }
  })

  it('pools in transaction mode with prepared statements kept (PgBouncer 1.21+), for the database the apps name', () => {
    const ini = read('deploy/pgbouncer.ini')
    const setting = (name: string) => new RegExp(`^${name}\\s*=\\s*(.+)$`, 'm').exec(ini)?.[1]?.trim()
    expect(setting('pool_mode')).toBe('transaction')
    expect(Number(setting('max_prepared_statements'))).toBeGreaterThan(0)
    expect(setting('listen_port')).toBe('6432')
    expect(setting('marketplace')).toBe('host=postgres port=5432 dbname=marketplace')
    const [major, minor] = /pgbouncer:v(\d+)\.(\d+)/.exec(services.pgbouncer!.image!)!.slice(1).map(Number)
    expect(major! * 100 + minor!).toBeGreaterThanOrEqual(121)
    expect(read('deploy/pgbouncer-userlist.txt')).toContain('"marketplace" "marketplace"')
  })

  it('balances the proxy over both API instances on the port the image listens on, checking /ready', () => {
    const caddyfile = read('deploy/Caddyfile')
    expect(caddyfile).toMatch(/reverse_proxy api1:8000 api2:8000/)
    expect(caddyfile).toMatch(/health_uri \/ready/)
    expect(read('Dockerfile')).toMatch(/PORT=8000/)
  })

  const hasCompose = (() => {
    try {
      execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  })()
  it.runIf(hasCompose)('passes `docker compose config`', () => {
    execFileSync('docker', ['compose', 'config', '--quiet'], { cwd: root, env: { ...process.env, ...secrets }, stdio: 'pipe' })
  })
})
