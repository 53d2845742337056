import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { fromPool } from '../../src/db/client.ts'
import { fromPglite, pgliteExtensions } from '../../src/db/pglite.ts'
import { runMigrations } from '../../src/db/migrate.ts'
import { startPgBouncer } from './pgbouncer.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteDump: string
    pgTemplate: string
    /** PgBouncer in front of TEST_DATABASE_URL's server, when the machine has one: test files connect through it. */
    pgBouncerUrl: string
  }
}

/**
 * Migrates once for the whole run. PGlite: the migrated data directory is dumped to a file that
 * every test file loads. PostgreSQL: a migrated template database every test file clones.
 */
export default async function setup(project: TestProject) {
  const url = process.env.TEST_DATABASE_URL
  if (url) {
    const template = `mk_template_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`create database ${template}`)
    const pool = new pg.Pool({ connectionString: withDatabase(url, template), max: 1 })
    await runMigrations(fromPool(pool))
    await pool.end()
    await admin.query(`alter database ${template} is_template true`)
    project.provide('pgTemplate', template)
    project.provide('pgliteDump', '')
    const bouncer = await startPgBouncer(url)
    project.provide('pgBouncerUrl', bouncer?.url ?? '')
    console.log(bouncer ? `PostgreSQL through PgBouncer (transaction mode) at ${bouncer.url}` : 'PostgreSQL directly (no PgBouncer 1.21+ found)')
    return async () => {
      bouncer?.stop()
      const leftovers = await admin.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [`mk_${process.pid}_%`])
      for (const { datname } of leftovers.rows) await admin.query(`drop database if exists ${datname} with (force)`)
      await admin.query(`alter database ${template} is_template false`)
      await admin.query(`drop database if exists ${template} with (force)`)
      await admin.end()
    }
  }

  const dir = mkdtempSync(join(tmpdir(), 'marketplace-test-'))
  const client = new PGlite({ extensions: pgliteExtensions })
  await runMigrations(fromPglite(client))
  const dump = await client.dumpDataDir('none')
  await client.close()
  const file = join(dir, 'migrated.tar')
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()))
  project.provide('pgliteDump', file)
  project.provide('pgTemplate', '')
  project.provide('pgBouncerUrl', '')
  return () => rmSync(dir, { recursive: true, force: true })
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}
