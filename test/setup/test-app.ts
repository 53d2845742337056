import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Writable } from 'node:stream'
import { PGlite } from '@electric-sql/pglite'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { expect, inject } from 'vitest'
import { buildApp } from '../../src/app.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import { fromPool, openPool, type Database } from '../../src/db/client.ts'
import { fromPglite, pgliteExtensions } from '../../src/db/pglite.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import type { Mailer, MailMessage } from '../../src/platform/mail/mailer.ts'
import { withDatabase } from './global-setup.ts'

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || process.env.REDIS_URL || undefined

/** Captures mail in memory; `failing` makes every send throw, as an SMTP outage would. */
export class MemoryMailer implements Mailer {
  sent: MailMessage[] = []
  failing = false

  async send(message: MailMessage): Promise<void> {
    if (this.failing) throw new Error('SMTP unavailable')
    this.sent.push(message)
  }

  close(): void {}

  /** The first link in the newest message to `to`. */
  linkTo(to: string): string {
    const message = [...this.sent].reverse().find((candidate) => candidate.to === to)
    const link = message?.text.match(/https?:\/\/\S+/)?.[0]
    if (!link) throw new Error(`no mail with a link to ${to}`)
    return link
  }

  tokenTo(to: string): string {
    return new URL(this.linkTo(to)).searchParams.get('token')!
  }
}

/**
 * A fresh database for one test file: a copy of the migrated one, on PGlite or PostgreSQL.
 * `direct` connects past the run's PgBouncer, for a test that inspects a server session itself
 * (its prepared statements and their plans): through the pooler, each query may find another.
 */
export async function openTestDatabase(options: { direct?: boolean } = {}): Promise<{ database: Database; drop: () => Promise<void> }> {
  const template = inject('pgTemplate')
  const url = process.env.TEST_DATABASE_URL
  if (template && url) {
    const name = `mk_${template.split('_')[2]}_${randomBytes(6).toString('hex')}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`create database ${name} template ${template}`)
    // Through PgBouncer when the run has one (admin statements above stay direct).
    const pool = openPool(withDatabase((!options.direct && inject('pgBouncerUrl')) || url, name), 5)
    // Dropping the database with (force) terminates connections that are still closing.
    const tolerateTermination = (error: Error & { code?: string }) => {
      if (error.code !== '57P01') throw error
    }
    pool.on('error', tolerateTermination)
    pool.on('connect', (client) => client.on('error', tolerateTermination))
    const database = fromPool(pool)
    return {
      database,
      drop: async () => {
        await database.close()
        await admin.query(`drop database if exists ${name} with (force)`)
        await admin.end()
      },
    }
  }
  const dump = new Blob([readFileSync(inject('pgliteDump'))])
  const database = fromPglite(new PGlite({ loadDataDir: dump, extensions: pgliteExtensions }))
  return { database, drop: () => database.close() }
}

export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'marketplace-data-')),
    JWT_ACCESS_SECRET: 'test-access-secret-0123456789-abcdefghij',
    JWT_REFRESH_SECRET: 'test-refresh-secret-0123456789-abcdefghij',
    FILE_SIGNING_SECRET: 'test-file-signing-secret-0123456789-abcdef',
    RUN_WORKER: 'false',
    RATE_LIMIT_AUTH: '100000',
    RATE_LIMIT_UPLOADS: '100000',
    RATE_LIMIT_GENERAL: '100000',
    LOG_LEVEL: 'silent',
    APP_URL: 'http://app.test',
    // Earnings available at once, as before clearance existed; the clearance tests turn it on.
    CLEARANCE_DAYS: '0',
    ...env,
  })
}

export interface TestContext {
  app: FastifyInstance
  database: Database
  clock: ManualClock
  mailer: MemoryMailer
  config: Config
  close(): Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string | undefined>
  /** Share a database with another app (two instances behind one load balancer). */
  database?: Database
  mailer?: Mailer
  logStream?: Writable
  clock?: ManualClock
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestContext> {
  const own = options.database ? undefined : await openTestDatabase()
  const database = options.database ?? own!.database
  const config = testConfig(options.env)
  const clock = options.clock ?? new ManualClock()
  const mailer = new MemoryMailer()
  const app = await buildApp({ config, database, clock, mailer: options.mailer ?? mailer, logStream: options.logStream })
  await app.ready()
  return {
    app,
    database,
    clock,
    mailer,
    config,
    async close() {
      await app.close()
      await own?.drop()
      rmSync(config.dataDir, { recursive: true, force: true })
    },
  }
}

export const API = '/api/v1'

/** `app.inject` under the API prefix with an optional bearer token. */
export function request(app: FastifyInstance, options: Omit<InjectOptions, 'url'> & { url: string; token?: string }): Promise<LightMyRequestResponse> {
  const { token, url, headers, ...rest } = options
  return app.inject({
    ...rest,
    url: `${API}${url}`,
    headers: { ...headers, ...(token && { authorization: `Bearer ${token}` }) },
  })
}

export interface ErrorJson {
  success: false
  error: { code: string; message: string; details: { field: string; message: string }[] }
}

/** The fields named in a 400's details, sorted, for compact assertions. */
export const fieldsOf = (response: LightMyRequestResponse): string[] =>
  [...new Set(response.json<ErrorJson>().error.details.map((detail) => detail.field))].sort()

/** Asserts an error answer: status, the envelope, the code and, when given, the fields named. */
export function expectError(response: LightMyRequestResponse, status: number, code: string, fields?: string[]): void {
  expect(response.statusCode, response.body).toBe(status)
  const body = response.json<ErrorJson>()
  expect(body.success).toBe(false)
  expect(body.error.code).toBe(code)
  expect(typeof body.error.message).toBe('string')
  if (fields) expect(fieldsOf(response)).toEqual(fields)
}
