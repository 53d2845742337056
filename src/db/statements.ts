import type { SQL } from 'drizzle-orm'
import { PgDatabase, PgDialect, PgSession, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core'
import type { Db, Executor } from './client.ts'

/**
 * Statements built once and run on any executor, the pool or an open transaction.
 *
 * Drizzle's own `.prepare()` binds a statement to the handle it was built on, so a statement
 * prepared on the pool cannot run inside a transaction, and building the query again for each
 * transaction costs more CPU than the database spends running it (a payout or an order runs
 * its hot statements in a transaction). Here the query builder runs once, against a session
 * that only records what the builder would send: the SQL text, its parameters (placeholders
 * included) and how rows map back. Each call hands that record to the executor's own session.
 * On PostgreSQL the statement is named, so each connection parses and plans it once; PGlite
 * runs the same text.
 */

type PrepareArgs = Parameters<PgSession['prepareQuery']>

/** Stands where the builder expects its prepared query; select builders set two fields on it. */
class Recorded {
  /** Which joined tables may come back null. */
  joinsNotNullableMap?: Record<string, boolean>
  /** The driver's prepared query for each session it ran on: the pool's is made once, a transaction's once per transaction. */
  readonly bySession = new WeakMap<object, PgPreparedQuery<PreparedQueryConfig>>()
  constructor(readonly args: PrepareArgs) {}
  setToken(): this {
    return this
  }
}

class RecordingSession extends PgSession {
  recorded: Recorded | undefined

  override prepareQuery<T extends PreparedQueryConfig>(...args: PrepareArgs): PgPreparedQuery<T> {
    this.recorded = new Recorded(args)
    return this.recorded as unknown as PgPreparedQuery<T>
  }

  override transaction(): never {
    throw new Error('a statement is only recorded here, never run')
  }
}

const dialect = new PgDialect()
const texts = new Map<string, string>()

/** PostgreSQL keeps named statements per connection: one name must always mean one text. */
function claim(name: string, text: string): void {
  const taken = texts.get(name)
  if (taken !== undefined && taken !== text) throw new Error(`the statement name ${name} is taken by another statement`)
  texts.set(name, text)
}

function run(executor: Executor, recorded: Recorded, values: Record<string, unknown>): Promise<unknown> {
  const { session } = executor._
  let query = recorded.bySession.get(session)
  if (!query) {
    query = session.prepareQuery(...recorded.args)
    if (recorded.joinsNotNullableMap) Object.assign(query, { joinsNotNullableMap: recorded.joinsNotNullableMap })
    recorded.bySession.set(session, query)
  }
  return query.execute(values)
}

interface Preparable<Result> {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<Result> }
}

/**
 * A query-builder statement with `sql.placeholder(...)` values, e.g.
 * `prepared('users_by_id', (db) => db.select().from(users).where(eq(users.id, sql.placeholder('id'))))`,
 * run as `statement(executor, { id })`. Rows come back as the builder maps them.
 */
export function prepared<Result>(name: string, build: (db: Db) => Preparable<Result>): (executor: Executor, values: Record<string, unknown>) => Promise<Result> {
  let recorded: Recorded | undefined
  const record = (): Recorded => {
    const session = new RecordingSession(dialect)
    build(new PgDatabase(dialect, session, undefined)).prepare(name)
    if (!session.recorded) throw new Error(`the statement ${name} was not built by a query builder`)
    claim(name, session.recorded.args[0].sql)
    return session.recorded
  }
  return (executor, values) => {
    recorded ??= record()
    return run(executor, recorded, values) as Promise<Result>
  }
}

/**
 * A hand-written SQL statement (`sql` with `sql.placeholder(...)` values) for what the builder
 * cannot say in one round trip, e.g. a data-modifying CTE. Rows come back as the driver gives
 * them: column names as written, timestamps as text, bigints as numbers or strings.
 */
export function preparedSql<Values extends object, Row>(name: string, statement: SQL): (executor: Executor, values: Values) => Promise<Row[]> {
  const query = dialect.sqlToQuery(statement)
  claim(name, query.sql)
  const recorded = new Recorded([query, undefined, name, false])
  return async (executor, values) => ((await run(executor, recorded, values as Record<string, unknown>)) as { rows: Row[] }).rows
}
