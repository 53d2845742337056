import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestDatabase } from '../../test/setup/test-app.ts'
import { newId } from '../lib/ids.ts'
import { uploads } from '../modules/uploads/uploads.table.ts'
import { users } from '../modules/users/users.table.ts'
import type { Database } from './client.ts'
import { executeRecorded, recordBuilder, recordSql, SUPPORTED_DRIZZLE_ORM } from './drizzle-prepare-adapter.ts'

/** The installed drizzle-orm's version, from its package.json (which its `exports` map does not list). */
function installedDrizzleVersion(): string {
  const entry = createRequire(import.meta.url).resolve('drizzle-orm')
  return (JSON.parse(readFileSync(join(dirname(entry), 'package.json'), 'utf8')) as { version: string }).version
}

describe('the Drizzle prepare adapter', () => {
  it(`is used with the drizzle-orm release it is written for (${SUPPORTED_DRIZZLE_ORM}.x)`, () => {
    const installed = installedDrizzleVersion()
    const [major, minor] = installed.split('.')
    expect(
      `${major}.${minor}`,
      `drizzle-orm ${installed} is installed, and src/db/drizzle-prepare-adapter.ts is written for ${SUPPORTED_DRIZZLE_ORM}.x: ` +
        'check that PgSession.prepareQuery still takes (query, fields, name, isResponseInArrayMode, customResultMapper, ...) ' +
        'and what select builders set on the prepared query, run this file, then move SUPPORTED_DRIZZLE_ORM',
    ).toBe(SUPPORTED_DRIZZLE_ORM)
  })

  describe('on a database', () => {
    let database: Database
    let drop: () => Promise<void>
    beforeAll(async () => {
      ;({ database, drop } = await openTestDatabase())
    })
    afterAll(() => drop())

    const insertUser = async (label: string) => {
      const id = newId()
      const at = new Date('2026-11-25T08:00:00.000Z')
      await database.db.insert(users).values({ id, email: `${label}-${id}@adapter.test`, username: `${label}${id.slice(-12)}`, fullName: label, passwordHash: 'x', createdAt: at, updatedAt: at })
      return { id, at }
    }

    it('records what a builder prepares (text and placeholders) without running it, and runs it on the pool and in a transaction', async () => {
      const recorded = recordBuilder('adapter_user_with_avatar', (db) =>
        db
          .select({ id: users.id, createdAt: users.createdAt, avatar: uploads })
          .from(users)
          .leftJoin(uploads, eq(uploads.objectId, users.id))
          .where(eq(users.id, sql.placeholder('id'))),
      )
      expect(recorded.text).toMatch(/^select "users"\."id", "users"\."created_at", .* from "users" left join "uploads" on .* where "users"\."id" = \$1$/)

      const { id, at } = await insertUser('adapter')
      // The builder's row mapping is kept: a Date, and the left-joined table null when absent.
      expect(await executeRecorded(database.db, recorded, { id })).toEqual([{ id, createdAt: at, avatar: null }])
      const inside = await database.db.transaction((tx) => executeRecorded(tx, recorded, { id }))
      expect(inside).toEqual([{ id, createdAt: at, avatar: null }])
      expect(await executeRecorded(database.db, recorded, { id: newId() })).toEqual([])
    })

    it('runs hand-written SQL with placeholders and answers the driver’s result', async () => {
      const recorded = recordSql('adapter_user_email', sql`select email from ${users} where id = ${sql.placeholder('id')}::uuid`)
      expect(recorded.text).toBe('select email from "users" where id = $1::uuid')
      const { id } = await insertUser('rawadapter')
      const result = (await executeRecorded(database.db, recorded, { id })) as { rows: { email: string }[] }
      expect(result.rows).toEqual([{ email: `rawadapter-${id}@adapter.test` }])
    })

    it('says which statement was not made by a query builder', () => {
      expect(() => recordBuilder('adapter_not_a_builder', () => ({ prepare: () => ({ execute: async () => [] }) }))).toThrow(/adapter_not_a_builder was not built by a query builder/)
    })
  })
})
