import { fileURLToPath } from 'node:url'
import { readMigrationFiles } from 'drizzle-orm/migrator'
import type { Database } from './client.ts'

export const migrationsFolder = fileURLToPath(new URL('../../migrations', import.meta.url))

/** Arbitrary constant naming the advisory lock that serialises migrations across instances. */
const MIGRATION_LOCK_ID = 72_061_901

/**
 * Applies the pending migrations. On PostgreSQL it is one transaction that first takes a
 * transaction-scoped advisory lock, so several instances starting at once migrate one after the
 * other, and it works the same through a pooler in transaction mode, where a session-level lock
 * taken on one server connection could be released on another (decision 0188). The bookkeeping
 * is Drizzle's own (`drizzle.__drizzle_migrations`: each applied file's hash and folder time), read
 * with Drizzle's public `readMigrationFiles`, so `drizzle-kit` and this runner agree on what ran.
 */
export async function runMigrations(database: Database): Promise<void> {
  if (database.kind === 'pglite') {
    const { migratePglite } = await import('./pglite.ts')
    await migratePglite(database.client, migrationsFolder)
    return
  }
  const migrations = readMigrationFiles({ migrationsFolder })
  const client = await database.pool.connect()
  try {
    await client.query('begin')
    try {
      await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID])
      await client.query('create schema if not exists drizzle')
      await client.query('create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)')
      const last = await client.query<{ created_at: string }>('select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1')
      const appliedUpTo = last.rows[0] ? Number(last.rows[0].created_at) : -1
      for (const migration of migrations) {
        if (migration.folderMillis <= appliedUpTo) continue
        for (const statement of migration.sql) if (statement.trim()) await client.query(statement)
        await client.query('insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)', [migration.hash, migration.folderMillis])
      }
      await client.query('commit')
    } catch (error) {
      await client.query('rollback')
      throw error
    }
  } finally {
    client.release()
  }
}
