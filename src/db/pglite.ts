import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { migrate } from 'drizzle-orm/pglite/migrator'
import { isProcessAlive } from '../lib/processes.ts'
import { DatabaseInUseError, type Database, type Db } from './client.ts'

/**
 * The embedded database (PGlite). Only the code that runs on it imports this file, and the
 * process only through `openDatabase` and `runMigrations`, which load it when PGlite is the
 * configured database: its bundle and the Drizzle driver stay out of an instance on PostgreSQL.
 */

export const pgliteExtensions = { pg_trgm }

/** Opens the embedded database kept in `dataDir`, which no other process may hold meanwhile. */
export function openPglite(dataDir: string): Database {
  mkdirSync(dataDir, { recursive: true })
  const release = lockDataDir(dataDir)
  const database = fromPglite(new PGlite(dataDir, { extensions: pgliteExtensions }))
  return {
    ...database,
    close: async () => {
      await database.close()
      release()
    },
  }
}

/**
 * PGlite is one process: a second process opening the same directory (the CLI while the server
 * runs) would corrupt it. A lock file with the owner's pid refuses that, and a stale lock left
 * by a crashed process is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, 'marketplace.lock')
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      return () => rmSync(file, { force: true })
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error
      const owner = Number.parseInt(readFileSync(file, 'utf8'), 10)
      if (owner !== process.pid && isProcessAlive(owner)) {
        throw new DatabaseInUseError(`The embedded database in ${dataDir} is in use by process ${owner}. Stop it first, or use PostgreSQL (DATABASE_URL).`)
      }
      rmSync(file, { force: true })
    }
  }
}

export function fromPglite(client: PGlite): Database {
  const db = drizzlePglite(client) as unknown as Db
  return {
    kind: 'pglite',
    db,
    client,
    close: async () => {
      if (!client.closed) await client.close()
    },
  }
}

/** Applies the pending migrations on the embedded database (one connection: nothing to serialise). */
export async function migratePglite(client: PGlite, migrationsFolder: string): Promise<void> {
  await migrate(drizzlePglite(client), { migrationsFolder })
}
