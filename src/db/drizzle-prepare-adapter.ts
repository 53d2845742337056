import { is, Placeholder, type SQL } from 'drizzle-orm'
import { PgDatabase, PgDialect, PgSession, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core'
import type { Db, Executor } from './client.ts'

/**
 * The one place that leans on how Drizzle's sessions prepare a query, which Drizzle exports but
 * does not document: a `PgSession` subclass that records what a query builder's `.prepare(name)`
 * hands its session, and `prepareQuery` called with those same arguments, by position, on the
 * session of whichever executor runs the statement (`db/statements.ts` says why).
 *
 * Written against the drizzle-orm release below. `drizzle-prepare-adapter.test.ts` reads the
 * installed version and fails on any other, so an upgrade is a deliberate step: check
 * `PgSession.prepareQuery(query, fields, name, isResponseInArrayMode, customResultMapper,
 * queryMetadata, cacheConfig)` and the fields select builders set on the prepared query (today
 * `joinsNotNullableMap` and `setToken`), run that test, then move the version here.
 * @internal read by that test
 */
export const SUPPORTED_DRIZZLE_ORM = '0.45'

type PrepareArgs = Parameters<PgSession['prepareQuery']>

/** A statement's query as the builder (or the dialect) made it, ready to run on any executor. */
export interface RecordedQuery {
  /** The SQL text sent to the database, `$1`-style parameters included. */
  readonly text: string
  /** What fills each parameter, in order: a placeholder's name, or the value bound when the statement was built. */
  readonly parameters: ({ placeholder: string } | { value: unknown })[]
}

/** Stands where the builder expects its prepared query; select builders set two fields on it. */
class Recorded implements RecordedQuery {
  /** Which joined tables may come back null. */
  joinsNotNullableMap?: Record<string, boolean>
  /** The driver's prepared query for each session it ran on: the pool's is made once, a transaction's once per transaction. */
  readonly bySession = new WeakMap<object, PgPreparedQuery<PreparedQueryConfig>>()
  /** The same, sent without its name (`executeUnnamed`). */
  readonly unnamedBySession = new WeakMap<object, PgPreparedQuery<PreparedQueryConfig>>()
  constructor(readonly args: PrepareArgs) {}
  get text(): string {
    return this.args[0].sql
  }
  get parameters(): RecordedQuery['parameters'] {
    return this.args[0].params.map((param) => (is(param, Placeholder) ? { placeholder: param.name } : { value: param }))
  }
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

/** One dialect for every statement, whichever driver runs it: the text does not depend on the database. */
const dialect = new PgDialect()

/** Something a query builder made that `.prepare(name)` turns into a prepared query. */
export interface Preparable<Result> {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<Result> }
}

/** What a query builder would send for `.prepare(name)`: its text, parameters and how rows map back. */
export function recordBuilder(name: string, build: (db: Db) => Preparable<unknown>): RecordedQuery {
  const session = new RecordingSession(dialect)
  build(new PgDatabase(dialect, session, undefined)).prepare(name)
  if (!session.recorded) throw new Error(`the statement ${name} was not built by a query builder`)
  return session.recorded
}

/** A hand-written statement: rows come back as the driver gives them. */
export function recordSql(name: string, statement: SQL): RecordedQuery {
  return new Recorded([dialect.sqlToQuery(statement), undefined, name, false])
}

/** Runs a recorded query on the executor's own session, prepared there once. */
export function executeRecorded(executor: Executor, query: RecordedQuery, values: Record<string, unknown>): Promise<unknown> {
  return preparedOn(executor, query as Recorded, false).execute(values)
}

/**
 * Runs a recorded query without its name: PostgreSQL parses and plans it for its values on each
 * call, as it does any unnamed statement (the driver's query object is still made once per session).
 */
export function executeRecordedUnnamed(executor: Executor, query: RecordedQuery, values: Record<string, unknown>): Promise<unknown> {
  return preparedOn(executor, query as Recorded, true).execute(values)
}

function preparedOn(executor: Executor, recorded: Recorded, unnamed: boolean): PgPreparedQuery<PreparedQueryConfig> {
  const { session } = executor._
  const cache = unnamed ? recorded.unnamedBySession : recorded.bySession
  let prepared = cache.get(session)
  if (!prepared) {
    const [query, fields, name, ...rest] = recorded.args
    prepared = session.prepareQuery(query, fields, unnamed ? undefined : name, ...rest)
    if (recorded.joinsNotNullableMap) Object.assign(prepared, { joinsNotNullableMap: recorded.joinsNotNullableMap })
    cache.set(session, prepared)
  }
  return prepared
}
