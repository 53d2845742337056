import { AsyncLocalStorage } from 'node:async_hooks'
import type { Db } from './client.ts'

/** The query entry points of a Drizzle database; each is refused on the outer handle inside a transaction. */
const QUERY_METHODS = new Set(['select', 'selectDistinct', 'selectDistinctOn', 'insert', 'update', 'delete', 'execute', 'with', '$with', '$count', 'refreshMaterializedView', 'transaction'])

const openTransaction = new AsyncLocalStorage<true>()

export class OuterDatabaseInTransactionError extends Error {
  override name = 'OuterDatabaseInTransactionError'
}

/**
 * Development and test guard for STYLE "Transactions": inside `db.transaction(...)` every query
 * must go through the transaction. On PGlite (one connection) a query on the outer `db` from
 * inside a transaction waits for that transaction forever; on PostgreSQL it silently runs outside
 * it. Wrapped this way, the call throws at once, naming itself, on both databases. Production
 * uses the bare handle (no proxy on the hot path).
 */
export function guardTransactions(db: Db): Db {
  return new Proxy(db, {
    get(target, property, receiver) {
      // `_.session` is how prepared statements (db/statements.ts) reach the driver.
      if (property === '_' && openTransaction.getStore()) {
        throw new OuterDatabaseInTransactionError('a statement was run on the outer database inside a transaction: pass the transaction (tx) as its executor')
      }
      const value: unknown = Reflect.get(target, property, receiver)
      if (typeof property !== 'string' || !QUERY_METHODS.has(property) || typeof value !== 'function') return value
      const method = value as (...args: unknown[]) => unknown
      return (...args: unknown[]) => {
        if (openTransaction.getStore()) {
          throw new OuterDatabaseInTransactionError(
            `db.${property}() was called on the outer database inside a transaction: use the transaction's executor (tx) instead, or run it after the transaction`,
          )
        }
        if (property !== 'transaction') return method.apply(target, args)
        const [work, ...rest] = args as [(tx: unknown) => Promise<unknown>, ...unknown[]]
        return method.apply(target, [(tx: unknown) => openTransaction.run(true, () => work(tx)), ...rest])
      }
    },
  })
}
