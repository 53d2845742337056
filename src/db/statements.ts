import type { SQL } from 'drizzle-orm'
import type { Db, Executor } from './client.ts'
import { executeRecorded, executeRecordedUnnamed, recordBuilder, recordSql, type Preparable, type RecordedQuery } from './drizzle-prepare-adapter.ts'

/**
 * Statements built once and run on any executor, the pool or an open transaction.
 *
 * Drizzle's own `.prepare()` binds a statement to the handle it was built on, so a statement
 * prepared on the pool cannot run inside a transaction, and building the query again for each
 * transaction costs more CPU than the database spends running it (a payout or an order runs
 * its hot statements in a transaction). Here the query builder runs once, against a session
 * that only records what the builder would send: the SQL text, its parameters (placeholders
 * included) and how rows map back. Each call hands that record to the executor's own session
 * (`drizzle-prepare-adapter.ts`, the one file that knows how). On PostgreSQL the statement is
 * named, so each connection parses and plans it once; PGlite runs the same text.
 *
 * Every statement's final text is also checked in, one file per name under `sql/statements/`
 * (`npm run sql:generate`, `declaredStatements` below), so that a change to any fragment shows in
 * review as a change to each statement it ends up in.
 */

/** Each statement's text by name; a statement of the query builder is recorded on first use. */
const recordedTexts = new Map<string, RecordedQuery>()
/** `prepared` statements not recorded yet, and how to record them. */
const unrecorded = new Map<string, () => void>()
/** Statements built only when first needed, by family: how to build them all. */
const lazyFamilies = new Map<string, () => void>()

/** PostgreSQL keeps named statements per connection: one name must always mean one text. */
function claim(name: string, query: RecordedQuery): void {
  const taken = recordedTexts.get(name)
  if (taken !== undefined && taken.text !== query.text) throw new Error(`the statement name ${name} is taken by another statement`)
  recordedTexts.set(name, query)
}

/**
 * A query-builder statement with `sql.placeholder(...)` values, e.g.
 * `prepared('users_by_id', (db) => db.select().from(users).where(eq(users.id, sql.placeholder('id'))))`,
 * run as `statement(executor, { id })`. Rows come back as the builder maps them.
 */
export function prepared<Result>(name: string, build: (db: Db) => Preparable<Result>): (executor: Executor, values: Record<string, unknown>) => Promise<Result> {
  let recorded: RecordedQuery | undefined
  // Recorded on first use, not here: a module's statements are declared while the modules are
  // still being built, and building costs CPU at start for statements that may never run.
  const record = (): RecordedQuery => {
    if (!recorded) {
      recorded = recordBuilder(name, build)
      claim(name, recorded)
      unrecorded.delete(name)
    }
    return recorded
  }
  unrecorded.set(name, record)
  return (executor, values) => executeRecorded(executor, recorded ?? record(), values) as Promise<Result>
}

/** A hand-written statement: run it named (planned once per connection), or `unnamed`. */
export interface PreparedSql<Values, Row> {
  (executor: Executor, values: Values): Promise<Row[]>
  /**
   * The same text sent without its name, so PostgreSQL plans it for these values on every call:
   * for the values a generic plan cannot serve (a filter whose best index depends on its value).
   */
  unnamed(executor: Executor, values: Values): Promise<Row[]>
}

/**
 * A hand-written SQL statement (`sql` with `sql.placeholder(...)` values) for what the builder
 * cannot say in one round trip, e.g. a data-modifying CTE. Rows come back as the driver gives
 * them: column names as written, timestamps as text, bigints as numbers or strings.
 */
export function preparedSql<Values extends object, Row>(name: string, statement: SQL): PreparedSql<Values, Row> {
  const recorded = recordSql(name, statement)
  claim(name, recorded)
  const run = async (executor: Executor, values: Values) => ((await executeRecorded(executor, recorded, values as Record<string, unknown>)) as { rows: Row[] }).rows
  const unnamed = async (executor: Executor, values: Values) => ((await executeRecordedUnnamed(executor, recorded, values as Record<string, unknown>)) as { rows: Row[] }).rows
  return Object.assign(run, { unnamed })
}

/**
 * Declares statements a module builds only when first needed (one per shape of a list, say):
 * `buildAll` builds every one of them, so that `declaredStatements` can list them. A module built
 * again (another app in the same process) replaces its family.
 */
export function declareLazyStatements(family: string, buildAll: () => void): void {
  lazyFamilies.set(family, buildAll)
}

/**
 * Tests name the statements they declare to exercise this file `test_...`; they are no part of
 * the application's SQL.
 */
const isScratch = (name: string) => name.startsWith('test_')

/**
 * Every statement declared so far, by name in code-point order, with its text and what fills
 * each parameter, after building those that wait for first use. With an app built, that is
 * every statement it can run.
 */
export function declaredStatements(): ({ name: string } & Pick<RecordedQuery, 'text' | 'parameters'>)[] {
  for (const buildAll of lazyFamilies.values()) buildAll()
  for (const record of [...unrecorded.values()]) record()
  return [...recordedTexts]
    .filter(([name]) => !isScratch(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, query]) => ({ name, text: query.text, parameters: query.parameters }))
}
