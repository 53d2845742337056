import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { drizzle } from 'drizzle-orm/node-postgres'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { withDatabase } from '../setup/global-setup.ts'
import { fromPool, openPool } from '../../src/db/client.ts'
import { migrationsFolder, runMigrations } from '../../src/db/migrate.ts'

const url = process.env.TEST_DATABASE_URL
const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] }

/** The indexes of large tables a deployment may build beforehand (docs/operations.md, "Deploying a new version"): the migration and the index. */
const BUILT_BEFOREHAND = [
  { tag: '0037_seller_order_figures', index: 'orders_seller_open_idx' },
  { tag: '0040_services_active_delivery', index: 'services_active_delivery_idx' },
]

/**
 * The PostgreSQL migration runner: one transaction under a transaction-scoped lock, so instances
 * that start together (directly or through a pooler in transaction mode) migrate once, and its
 * bookkeeping is the one Drizzle's own migrator reads.
 */
describe.skipIf(!url)('runMigrations on PostgreSQL', () => {
  const name = `mk_migrate_${process.pid}_${Date.now()}`
  let admin: pg.Client
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`create database ${name}`)
  })
  afterAll(async () => {
    await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
  })

  it('applies every migration once when several instances start at the same time, and Drizzle agrees', async () => {
    // Through PgBouncer in transaction mode when the run has one: the lock must hold there too.
    const pools = [1, 2, 3].map(() => openPool(withDatabase(inject('pgBouncerUrl') || url!, name), 2))
    try {
      await Promise.all(pools.map((pool) => runMigrations(fromPool(pool))))
      const applied = await pools[0]!.query<{ created_at: string }>('select created_at from drizzle.__drizzle_migrations order by id')
      expect(applied.rows.map((row) => Number(row.created_at))).toEqual(journal.entries.map((entry) => entry.when))
      // Drizzle's own migrator reads the same table and finds nothing left to do.
      await migrate(drizzle(pools[0]!), { migrationsFolder })
      await runMigrations(fromPool(pools[1]!))
      expect((await pools[0]!.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0].n).toBe(journal.entries.length)
      expect((await pools[0]!.query(`select to_regclass('public.orders') is not null as present`)).rows[0].present).toBe(true)
    } finally {
      await Promise.all(pools.map((pool) => pool.end()))
    }
  })

  /**
   * A database migrated up to the one before `tag`, with `index` built concurrently from the
   * migration's own statement (as the operations guide says), handed to `use`.
   */
  async function builtBeforehand(tag: string, index: string, use: (pool: pg.Pool) => Promise<void>) {
    const other = `${name}_${index}`.slice(0, 63)
    await admin.query(`create database ${other}`)
    const pool = openPool(withDatabase(url!, other), 1)
    const earlier = mkdtempSync(join(tmpdir(), 'migrations-'))
    try {
      // The migrations before this one, as a deployment that has not upgraded yet has them.
      cpSync(migrationsFolder, earlier, { recursive: true })
      const before = journal.entries.slice(0, journal.entries.findIndex((entry) => entry.tag === tag))
      writeFileSync(join(earlier, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries: before }))
      await migrate(drizzle(pool), { migrationsFolder: earlier })
      const statement = readFileSync(join(migrationsFolder, `${tag}.sql`), 'utf8')
        .split('--> statement-breakpoint')
        .map((part) => part.replace(/^--.*$/gm, '').trim())
        .find((part) => new RegExp(`^CREATE INDEX (IF NOT EXISTS )?"${index}"`).test(part))
      expect(statement).toBeDefined()
      await pool.query(statement!.replace(/^CREATE INDEX (IF NOT EXISTS )?/, 'CREATE INDEX CONCURRENTLY '))
      await use(pool)
    } finally {
      await pool.end()
      rmSync(earlier, { recursive: true, force: true })
      await admin.query(`drop database if exists ${other} with (force)`)
    }
  }

  // A large deployment builds such an index concurrently before it upgrades: the migration must
  // then find it, not fail.
  for (const { tag, index } of BUILT_BEFOREHAND) {
    it(`applies ${tag} after its index ${index} was built concurrently beforehand`, async () => {
      await builtBeforehand(tag, index, async (pool) => {
        await runMigrations(fromPool(pool))
        expect((await pool.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0].n).toBe(journal.entries.length)
        expect((await pool.query('select count(*)::int as n from pg_indexes where indexname = $1', [index])).rows[0].n).toBe(1)
      })
    })
  }

  it('refuses an index left invalid by a failed concurrent build, and applies once it is built again', async () => {
    const { tag, index } = BUILT_BEFOREHAND[1]!
    await builtBeforehand(tag, index, async (pool) => {
      // What a concurrent build that fails half-way leaves behind.
      await pool.query(`update pg_index set indisvalid = false where indexrelid = to_regclass($1)`, [`public."${index}"`])
      await expect(runMigrations(fromPool(pool))).rejects.toThrow(/invalid/)
      await pool.query(`drop index "${index}"`)
      await runMigrations(fromPool(pool))
      expect((await pool.query('select indisvalid from pg_index where indexrelid = to_regclass($1)', [`public."${index}"`])).rows).toEqual([{ indisvalid: true }])
    })
  })

  it('leaves nothing behind when a migration fails', async () => {
    const other = `${name}_broken`
    await admin.query(`create database ${other}`)
    const pool = openPool(withDatabase(url!, other), 1)
    try {
      // A table the first migration creates already exists: that statement fails, and the whole run rolls back.
      await pool.query('create table users (id int)')
      await expect(runMigrations(fromPool(pool))).rejects.toThrow(/already exists/)
      expect((await pool.query(`select to_regnamespace('drizzle') is null as absent`)).rows[0].absent).toBe(true)
    } finally {
      await pool.end()
      await admin.query(`drop database if exists ${other} with (force)`)
    }
  })
})
