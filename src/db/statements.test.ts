import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestDatabase } from '../../test/setup/test-app.ts'
import { newId } from '../lib/ids.ts'
import { users } from '../modules/users/users.table.ts'
import type { Database } from './client.ts'
import { prepared, preparedSql } from './statements.ts'
import { guardTransactions, OuterDatabaseInTransactionError } from './transaction-guard.ts'

const userById = prepared('test_users_by_id', (db) => db.select().from(users).where(eq(users.id, sql.placeholder('id'))))
const insertUser = prepared('test_users_insert', (db) => db
    .insert(users)
    .values({
      id: sql.placeholder('id'),
      email: sql.placeholder('email'),
      username: sql.placeholder('username'),
      fullName: sql.placeholder('fullName'),
      passwordHash: sql.placeholder('passwordHash'),
      createdAt: sql.placeholder('createdAt'),
      updatedAt: sql.placeholder('updatedAt'),
    })
    .returning())
const emailsLike = preparedSql<{ pattern: string }, { email: string; created_at: string | Date }>('test_users_emails', sql`select email, created_at from users where email like ${sql.placeholder('pattern')} order by email`)

describe('statements built once and run on any executor', () => {
  let database: Database
  let drop: () => Promise<void>
  beforeAll(async () => {
    ;({ database, drop } = await openTestDatabase())
  })
  afterAll(() => drop())

  const newUser = (label: string) => {
    const id = newId()
    const now = new Date('2026-11-24T10:00:00.000Z')
    return { id, email: `${label}-${id}@statements.test`, username: `${label}${id.slice(-12)}`, fullName: label, passwordHash: 'x', createdAt: now, updatedAt: now }
  }

  it('runs on the pool and maps rows as the query builder does (dates, booleans)', async () => {
    const user = newUser('pool')
    const [inserted] = await insertUser(database.db, user)
    expect(inserted).toMatchObject({ id: user.id, email: user.email, isActive: false, createdAt: user.createdAt })
    const [found] = await userById(database.db, { id: user.id })
    expect(found?.createdAt).toBeInstanceOf(Date)
    expect(found).toEqual(inserted)
    expect(await userById(database.db, { id: newId() })).toEqual([])
  })

  it('runs inside a transaction on its connection: it sees the transaction’s rows, and they go with a rollback', async () => {
    const user = newUser('rollback')
    const seenInside = await database.db
      .transaction(async (tx) => {
        await insertUser(tx, user)
        const rows = await userById(tx, { id: user.id })
        tx.rollback()
        return rows
      })
      .catch((error: unknown) => error)
    expect(seenInside).toBeInstanceOf(Error)
    expect(await userById(database.db, { id: user.id })).toEqual([])

    const committed = newUser('commit')
    const inside = await database.db.transaction(async (tx) => {
      await insertUser(tx, committed)
      return userById(tx, { id: committed.id })
    })
    expect(inside.map((row) => row.id)).toEqual([committed.id])
  })

  it('answers hand-written SQL with the driver’s rows', async () => {
    const user = newUser('rawsql')
    await insertUser(database.db, user)
    const rows = await emailsLike(database.db, { pattern: 'rawsql-%' })
    expect(rows.map((row) => row.email)).toEqual([user.email])
    expect(new Date(rows[0]!.created_at).toISOString()).toBe('2026-11-24T10:00:00.000Z')
  })

  it('refuses a second statement under a name another statement has, and accepts the same one again', () => {
    expect(() => preparedSql('test_users_emails', sql`select 1`)).toThrow(/taken by another statement/)
    expect(() => preparedSql('test_users_emails', sql`select email, created_at from users where email like ${sql.placeholder('pattern')} order by email`)).not.toThrow()
  })

  it('is refused on the guarded outer database inside a transaction, as any query is', async () => {
    const guarded = guardTransactions(database.db)
    await expect(guarded.transaction(() => userById(guarded, { id: newId() }))).rejects.toThrow(OuterDatabaseInTransactionError)
  })

  it('plans an ordinary parameterised query on a pooled PostgreSQL connection for its values', async (context) => {
    if (database.kind !== 'postgres') return context.skip()
    // auto_explain sends the plan each query ran with to the client as a notice: a plan made for
    // the values shows them; a generic one shows $1.
    const client = await database.pool.connect()
    const plans: string[] = []
    const onNotice = (notice: { message?: string }) => plans.push(notice.message ?? '')
    client.on('notice', onNotice)
    try {
      await client.query(`load 'auto_explain'`)
      await client.query('set auto_explain.log_min_duration = 0')
      await client.query('set auto_explain.log_level = notice')
      await client.query({ text: 'select id from users where email = $1', values: ['planned@statements.test'] })
      await client.query('reset auto_explain.log_min_duration')
    } finally {
      client.off('notice', onNotice)
      client.release()
    }
    const explained = plans.find((text) => text.includes('from users where email'))
    const plan = explained
      ?.split('\n')
      .filter((line) => !line.startsWith('Query Text:'))
      .join('\n')
    expect(plan).toContain(`'planned@statements.test'::text`)
    expect(plan).not.toContain('$1')
  })

  it('runs reads started side by side in a transaction one after another on its connection, without queueing in the driver', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on('warning', onWarning)
    try {
      const answers = await database.db.transaction((tx) =>
        Promise.all([tx.execute(sql`select pg_sleep(0.02), 1 as n`), tx.execute(sql`select 2 as n`), userById(tx, { id: newId() })]),
      )
      const [first, second, users] = answers as unknown as [{ rows: { n: number }[] }, { rows: { n: number }[] }, unknown[]]
      expect([first.rows[0]?.n, second.rows[0]?.n, users.length]).toEqual([1, 2, 0])
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.filter((message) => message.includes('already executing a query'))).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  })
})
