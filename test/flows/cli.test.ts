import { execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import { eq } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildApp } from '../../src/app.ts'
import { fromPool, type Database } from '../../src/db/client.ts'
import { fromPglite, pgliteExtensions } from '../../src/db/pglite.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { verifyPassword } from '../../src/lib/passwords.ts'
import { users } from '../../src/modules/users/users.table.ts'
import { createOutbox } from '../../src/platform/outbox/outbox.ts'
import { outboxJobs } from '../../src/platform/outbox/outbox.table.ts'
import { withDatabase } from '../setup/global-setup.ts'
import { request, testConfig } from '../setup/test-app.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CLI = ['--import', 'tsx', 'src/cli.ts']
const TIMEOUT = 60_000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** The environment of the test process without any database, mail or storage the CLI would pick up. */
function cliEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', ...overrides }
  for (const name of ['DATABASE_URL', 'SMTP_URL', 'REDIS_URL', 'S3_BUCKET', 'SUPERUSER_EMAIL', 'SUPERUSER_PASSWORD', 'SUPERUSER_FULL_NAME']) {
    if (!(name in overrides)) delete env[name]
  }
  return env
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env, timeout: TIMEOUT }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

describe('cli on the embedded database', () => {
  let dataDir: string
  let env: NodeJS.ProcessEnv
  const email = `root.${process.pid}@example.test`
  const password = 'Sup3r-secret'
  let userId: string

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marketplace-cli-'))
    env = cliEnv({ DATA_DIR: dataDir })
  })
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('migrate creates the database under DATA_DIR/db and exits 0, also when run again', { timeout: 2 * TIMEOUT }, async () => {
    const first = await runCli(['migrate'], env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('migrations applied')
    expect(existsSync(join(dataDir, 'db'))).toBe(true)

    const again = await runCli(['migrate'], env)
    expect(again.code).toBe(0)
  })

  it('create-superuser creates the account and prints its id', { timeout: TIMEOUT }, async () => {
    const result = await runCli(['create-superuser', '--email', `  ${email.toUpperCase()} `, '--password', password, '--full-name', ' Root Admin '], env)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    userId = result.stdout.trim()
    expect(userId).toMatch(UUID)
  })

  it('create-superuser refuses an e-mail that is already registered', { timeout: TIMEOUT }, async () => {
    const result = await runCli(['create-superuser', '--email', email, '--password', 'An0ther-secret', '--full-name', 'Second Root'], env)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/email/i)
    expect(result.stderr).toContain('already registered')
    expect(result.stdout).toBe('')
  })

  it('create-superuser without --password exits non-zero with the usage', { timeout: TIMEOUT }, async () => {
    const result = await runCli(['create-superuser', '--email', `other.${process.pid}@example.test`], env)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('--password')
    expect(result.stderr).toContain('Usage:')
    expect(result.stdout).toBe('')
  })

  it('create-superuser refuses a password shorter than 8 characters', { timeout: TIMEOUT }, async () => {
    const result = await runCli(['create-superuser', '--email', `short.${process.pid}@example.test`, '--password', 'short'], env)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('--password must be 8 to 128 characters')
  })

  it('create-superuser refuses an invalid e-mail address, which could never log in to the API', { timeout: TIMEOUT }, async () => {
    const result = await runCli(['create-superuser', '--email', 'root-at-localhost', '--password', 'Sup3r-secret'], env)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/e-?mail/i)
    expect(result.stdout).toBe('')
  })

  it('create-superuser reads SUPERUSER_* variables when no options are given', { timeout: TIMEOUT }, async () => {
    const fromEnv = cliEnv({
      DATA_DIR: dataDir,
      SUPERUSER_EMAIL: `env.${process.pid}@example.test`,
      SUPERUSER_PASSWORD: 'From-the-env-1',
      SUPERUSER_FULL_NAME: 'Env Admin',
    })
    const result = await runCli(['create-superuser'], fromEnv)
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toMatch(UUID)
  })

  it('levels:evaluate evaluates every seller now and prints each change of level, then the counts', { timeout: 2 * TIMEOUT }, async () => {
    // A level no record supports (the superuser never sold): the evaluation takes it back to new.
    const database = fromPglite(new PGlite(join(dataDir, 'db'), { extensions: pgliteExtensions }))
    try {
      await database.db.update(users).set({ sellerLevel: 'level_two' }).where(eq(users.id, userId))
    } finally {
      await database.close()
    }
    const first = await runCli(['levels:evaluate'], env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout.trim().split('\n')).toEqual([`${userId} level_two -> new`, 'sellers evaluated: 1, levels changed: 1'])

    const again = await runCli(['levels:evaluate'], env)
    expect(again.code).toBe(0)
    expect(again.stdout.trim()).toBe('sellers evaluated: 0, levels changed: 0')
  })

  it('an unknown command prints the usage and exits 2; help exits 0', { timeout: 2 * TIMEOUT }, async () => {
    const unknown = await runCli(['frobnicate'], env)
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toContain('Usage:')
    for (const command of ['migrate', 'create-superuser', 'worker', 'levels:evaluate']) expect(unknown.stdout).toContain(command)

    const help = await runCli(['help'], env)
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage:')
  })

  it('worker refuses to run on the embedded database with a message naming PostgreSQL', { timeout: TIMEOUT }, async () => {
    const result = await runCli(['worker'], env)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('PostgreSQL')
    expect(result.stderr).toContain('DATABASE_URL')
  })

  it('a bad variable stops the CLI with the variable named', { timeout: TIMEOUT }, async () => {
    const result = await runCli(['migrate'], cliEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'loud' }))
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('LOG_LEVEL')
  })

  it('left an active staff superuser in the data directory that can log in to the API', { timeout: TIMEOUT }, async () => {
    const database = fromPglite(new PGlite(join(dataDir, 'db'), { extensions: pgliteExtensions }))
    try {
      const rows = await database.db.select().from(users).where(eq(users.email, email))
      expect(rows).toHaveLength(1)
      const [user] = rows
      expect(user).toMatchObject({ id: userId, email, fullName: 'Root Admin', isActive: true, isStaff: true, isSuperuser: true })
      expect(user!.activatedAt).not.toBeNull()
      expect(await verifyPassword(user!.passwordHash, password)).toBe(true)
      expect(await database.db.select().from(users).where(eq(users.email, `other.${process.pid}@example.test`))).toHaveLength(0)
      expect(await database.db.select().from(users).where(eq(users.email, `short.${process.pid}@example.test`))).toHaveLength(0)
      expect(await database.db.select().from(users).where(eq(users.email, `env.${process.pid}@example.test`))).toMatchObject([
        { fullName: 'Env Admin', isSuperuser: true },
      ])

      const config = testConfig()
      const app = await buildApp({ config, database })
      try {
        const login = await request(app, { method: 'POST', url: '/auth/login', payload: { email, password } })
        expect(login.statusCode).toBe(200)
        expect(login.json().data.user).toMatchObject({ id: userId, isStaff: true, isSuperuser: true })
      } finally {
        await app.close()
        rmSync(config.dataDir, { recursive: true, force: true })
      }
    } finally {
      await database.close()
    }
  })
})

describe.runIf(process.env.TEST_DATABASE_URL)('cli on PostgreSQL', () => {
  const serverUrl = process.env.TEST_DATABASE_URL!
  let admin: pg.Client
  let name: string
  let url: string
  let dataDir: string
  let env: NodeJS.ProcessEnv
  let database: Database
  let userId: string

  beforeAll(async () => {
    // Named like the harness's databases, so its global teardown removes it if this file cannot.
    name = `mk_${inject('pgTemplate').split('_')[2]}_cli_${randomBytes(4).toString('hex')}`
    admin = new pg.Client({ connectionString: serverUrl })
    await admin.connect()
    await admin.query(`create database ${name}`)
    url = withDatabase(serverUrl, name)
    dataDir = mkdtempSync(join(tmpdir(), 'marketplace-cli-pg-'))
    env = cliEnv({ DATA_DIR: dataDir, DATABASE_URL: url })
    database = fromPool(new pg.Pool({ connectionString: url, max: 2 }))
  })
  afterAll(async () => {
    // Clients still ending when the database is dropped report "terminated by administrator".
    if (database?.kind === 'postgres') database.pool.on('error', () => {})
    await database?.close()
    await admin?.query(`drop database if exists ${name} with (force)`)
    await admin?.end()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('migrate builds an empty PostgreSQL database and create-superuser adds the account', { timeout: 2 * TIMEOUT }, async () => {
    const migrated = await runCli(['migrate'], env)
    expect(migrated.code).toBe(0)
    expect(existsSync(join(dataDir, 'db'))).toBe(false)

    const created = await runCli(['create-superuser', '--email', `pg.root.${process.pid}@example.test`, '--password', 'Sup3r-secret'], env)
    expect(created.code).toBe(0)
    userId = created.stdout.trim()
    expect(userId).toMatch(UUID)
    const [user] = await database.db.select().from(users).where(eq(users.id, userId))
    expect(user).toMatchObject({ fullName: 'Administrator', isActive: true, isStaff: true, isSuperuser: true })
  })

  it('worker delivers pending mail and stops cleanly on SIGTERM', { timeout: TIMEOUT }, async () => {
    const jobId = await database.db.transaction((tx) =>
      createOutbox({ clock: systemClock }).enqueue(tx, { topic: 'mail.password_reset', payload: { userId } }),
    )

    const worker = spawn(process.execPath, [...CLI, 'worker'], { cwd: ROOT, env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    worker.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      worker.on('exit', (code, signal) => resolve({ code, signal })),
    )
    const messages: string[] = []
    const mailed = new Promise<{ links: string[] }>((resolve, reject) => {
      createInterface({ input: worker.stdout }).on('line', (line) => {
        const entry = JSON.parse(line) as { msg: string; links?: string[] }
        messages.push(entry.msg)
        if (entry.links) resolve({ links: entry.links })
      })
      void exited.then(({ code }) => reject(new Error(`worker exited (${code}) before sending mail: ${stderr}`)))
    })

    try {
      const { links } = await mailed
      expect(links).toHaveLength(1)
      expect(links[0]).toMatch(/\/reset-password\?token=/)
    } finally {
      worker.kill('SIGTERM')
    }
    expect(await exited).toEqual({ code: 0, signal: null })
    expect(messages).toEqual(expect.arrayContaining(['worker started', 'worker stopping']))
    expect(stderr).toBe('')

    // Stopping waited for the batch in flight: the job is recorded as done, not left running.
    const [job] = await database.db.select().from(outboxJobs).where(eq(outboxJobs.id, jobId))
    expect(job).toMatchObject({ status: 'done', attempts: 1, lockedUntil: null })
    const files = readdirSync(join(dataDir, 'mail'))
    expect(files).toHaveLength(1)
    expect(readFileSync(join(dataDir, 'mail', files[0]!), 'utf8')).toContain('Subject: Reset your password')
  })
})
