import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { drizzle } from 'drizzle-orm/pglite'
import { migrate } from 'drizzle-orm/pglite/migrator'
import { expect } from 'vitest'
import { pgliteExtensions } from '../../src/db/pglite.ts'
import { migrationsFolder } from '../../src/db/migrate.ts'

/** The migrations folder as it was up to (and including) the migration tagged `last`. */
function migrationsUpTo(last: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'migrations-'))
  cpSync(migrationsFolder, folder, { recursive: true })
  const journalFile = join(folder, 'meta', '_journal.json')
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] }
  const end = journal.entries.findIndex((entry) => entry.tag === last)
  expect(end).toBeGreaterThan(0)
  writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, end + 1) }))
  return folder
}

/**
 * An embedded database to test a data migration on: `before()` migrates it up to the migration
 * tagged `last`, the test writes rows the way the schema stood then, and `after()` runs the rest.
 */
export function databaseBefore(last: string) {
  const client = new PGlite({ extensions: pgliteExtensions })
  const earlier = migrationsUpTo(last)
  return {
    client,
    before: () => migrate(drizzle(client), { migrationsFolder: earlier }),
    after: () => migrate(drizzle(client), { migrationsFolder }),
    close: async () => {
      await client.close()
      rmSync(earlier, { recursive: true, force: true })
    },
  }
}
