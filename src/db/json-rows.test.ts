import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestDatabase } from '../../test/setup/test-app.ts'
import { newId } from '../lib/ids.ts'
import { users } from '../modules/users/users.table.ts'
import type { Database } from './client.ts'
import { rowFromJson } from './json-rows.ts'

describe('a row a statement answered as JSON', () => {
  let database: Database
  let drop: () => Promise<void>
  beforeAll(async () => {
    ;({ database, drop } = await openTestDatabase())
  })
  afterAll(() => drop())

  it('decodes to the row a query of the table gives: dates, booleans, numbers and nulls alike', async () => {
    const id = newId()
    await database.db.insert(users).values({
      id,
      email: `json-${id}@rows.test`,
      username: `json${id.slice(-12)}`,
      fullName: 'Json Row',
      passwordHash: 'x',
      isActive: true,
      tokenVersion: 3,
      suspendedAt: new Date('2026-11-20T08:30:15.123Z'),
      createdAt: new Date('2026-11-01T00:00:00.000Z'),
      updatedAt: new Date('2026-11-02T00:00:00.000Z'),
    })
    const [lent] = await database.db.select({ account: sql<Record<string, unknown>>`row_to_json(${users})` }).from(users).where(eq(users.id, id))
    const [read] = await database.db.select().from(users).where(eq(users.id, id))
    expect(rowFromJson(users, lent!.account)).toEqual(read)
    expect(rowFromJson(users, JSON.stringify(lent!.account))).toEqual(read)
  })
})
