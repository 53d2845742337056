import type { PGlite } from '@electric-sql/pglite'
import { sql, type ExtractTablesWithRelations, type SQL } from 'drizzle-orm'
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres'
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core'
import pg from 'pg'
import type { DatabaseConfig } from '../config.ts'

// No relational-query schema: repositories write their queries with the query builder.
type NoSchema = Record<string, never>
export type Db = PgDatabase<PgQueryResultHKT, NoSchema>
export type Tx = PgTransaction<PgQueryResultHKT, NoSchema, ExtractTablesWithRelations<NoSchema>>
/** What a repository runs its queries on: the pool outside a transaction, or the transaction. */
export type Executor = Db | Tx

export type Database =
  | { kind: 'postgres'; db: Db; pool: pg.Pool; close(): Promise<void> }
  | { kind: 'pglite'; db: Db; client: PGlite; close(): Promise<void> }

// Timestamps and counts come back as JS values the same way on both drivers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10))

/** Where the pool reports connections it lost while idle (the process logger). */
export interface DatabaseLog {
  warn(details: object, message: string): void
}

/**
 * The configured database. The embedded one is loaded only when it is the one configured
 * (db/pglite.ts): an instance on PostgreSQL never loads PGlite's bundle.
 */
export async function openDatabase(config: DatabaseConfig, log?: DatabaseLog): Promise<Database> {
  if (config.kind === 'postgres') return fromPool(openPool(config.url, config.poolSize), log)
  const { openPglite } = await import('./pglite.ts')
  return openPglite(config.dataDir)
}

/** Another process holds the embedded database's directory. */
export class DatabaseInUseError extends Error {}

/**
 * A pool of connections that run their promise-style queries one after another. Plans are left to
 * PostgreSQL (`plan_cache_mode = auto`): an ordinary statement is planned for its values, and a
 * named statement (db/statements.ts) settles on one generic plan after a few calls when that plan
 * costs no more than the ones made for the values, as the hot ones are written to (decision 0126).
 */
export function openPool(url: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString: url, max, Client: OneQueryAtATimeClient })
}

/**
 * A connection that runs its promise-style queries one after another by itself. Inside a
 * transaction, reads started side by side (`Promise.all`) share the transaction's one connection;
 * node-postgres queues such queries today but has deprecated it (pg 9 drops the queue). Callback
 * and submittable queries (the pool's own) pass through untouched.
 */
class OneQueryAtATimeClient extends pg.Client {
  #last: Promise<unknown> | undefined

  override query(...args: unknown[]): never {
    const direct = (super.query as (...queryArgs: unknown[]) => unknown).bind(this)
    const callbackStyle = typeof args.at(-1) === 'function' || typeof (args[0] as { submit?: unknown } | undefined)?.submit === 'function'
    if (callbackStyle) return direct(...args) as never
    const run = () => direct(...args) as Promise<unknown>
    const result = this.#last ? this.#last.then(run, run) : run()
    const settled = result.then(
      () => undefined,
      () => undefined,
    )
    this.#last = settled
    void settled.then(() => {
      if (this.#last === settled) this.#last = undefined
    })
    return result as never
  }
}

export function fromPool(pool: pg.Pool, log?: DatabaseLog): Database {
  // An idle connection that PostgreSQL closes (restart, failover) is dropped and replaced by the
  // pool; without a listener its error event would crash the process.
  pool.on('error', (error) => log?.warn({ err: error }, 'idle PostgreSQL connection lost; the pool replaces it'))
  const db = drizzlePg(pool) as unknown as Db
  return { kind: 'postgres', db, pool, close: () => pool.end() }
}

/** The rows of a raw statement: both drivers answer `execute` with `{ rows }`; the shared type leaves it unknown. */
export async function rowsOf<T>(executor: Executor, query: SQL): Promise<T[]> {
  const result: unknown = await executor.execute(query)
  return (result as { rows: T[] }).rows
}

export async function pingDatabase(db: Db): Promise<void> {
  await db.execute(sql`select 1`)
}
