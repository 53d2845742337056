import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, expect, inject } from 'vitest'
import { fromPool, type Database } from '../../src/db/client.ts'
import { withDatabase } from './global-setup.ts'
import { createTestApp, testConfig, type TestContext } from './test-app.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * For tests that SIGKILL the server in a burst of writes: a PostgreSQL database of their own
 * (cloned from the migrated template), an app on it in the test process to arrange data and read
 * the books, and the server started as a process of its own on the same database. Call it inside
 * `describe`; it registers its own set-up and tear-down.
 */
export function crashServer(url: string, prefix: string, options: { env?: Record<string, string> } = {}) {
  let name: string
  let database: Database
  let ctx: TestContext
  let admin: pg.Client
  const dataDir = mkdtempSync(join(tmpdir(), `marketplace-${prefix}-`))
  const config = testConfig(options.env)

  beforeAll(async () => {
    name = `mk_${inject('pgTemplate').split('_')[2]}_${randomBytes(6).toString('hex')}`
    admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`create database ${name} template ${inject('pgTemplate')}`)
    database = fromPool(new pg.Pool({ connectionString: withDatabase(url, name), max: 4 }))
    ctx = await createTestApp({ database, env: options.env })
  })
  afterAll(async () => {
    await ctx.app.close()
    await database.close()
    await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
    rmSync(dataDir, { recursive: true, force: true })
  })

  return {
    /** The in-process app on the test's database (ready inside tests and hooks after set-up). */
    get ctx(): TestContext {
      return ctx
    },

    /** The server as its own process on the test's database: without the worker unless `env` runs it (`RUN_WORKER`), with the suite's `env` and this one's. */
    start(port: number, env: Record<string, string> = {}): ChildProcess {
      return spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        cwd: ROOT,
        stdio: 'ignore',
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          DATABASE_URL: withDatabase(url, name),
          JWT_ACCESS_SECRET: config.jwt.accessSecret,
          JWT_REFRESH_SECRET: config.jwt.refreshSecret,
          FILE_SIGNING_SECRET: config.fileSigning.secret,
          RATE_LIMIT_GENERAL: '100000',
          RUN_WORKER: 'false',
          LOG_LEVEL: 'silent',
          ...options.env,
          ...env,
        },
      })
    },

    /** Resolves once the server on `port` answers `GET /ready` with 200. */
    async ready(port: number): Promise<void> {
      await expect.poll(async () => (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.status, { timeout: 60_000, interval: 100 }).toBe(200)
    },
  }
}
