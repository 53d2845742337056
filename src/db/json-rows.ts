import { getTableColumns, sql, type Column, type SQL } from 'drizzle-orm'
import type { PgTable } from 'drizzle-orm/pg-core'

/**
 * A table's row as JSON inside another statement, and back. A module that owns a table lends its
 * row to another module's one-statement read (a scalar subquery `rowJsonSql` builds); the owner
 * decodes it with `rowFromJson`, column by column as Drizzle would (timestamps to dates, bigints
 * to numbers), so the caller gets the same row type as from a query of its own.
 */
export const rowJsonSql = (table: PgTable, where: SQL): SQL<Record<string, unknown> | null> => sql`(select row_to_json(${table}) from ${table} where ${where})`

/** Each table's columns as [property, column] pairs, listed once: a hot read decodes rows per request. */
const columnsByTable = new WeakMap<PgTable, [string, Column][]>()

export function rowFromJson<Table extends PgTable>(table: Table, json: Record<string, unknown> | string): Table['$inferSelect'] {
  const source: Record<string, unknown> = typeof json === 'string' ? (JSON.parse(json) as Record<string, unknown>) : json
  let columns = columnsByTable.get(table)
  if (columns === undefined) {
    columns = Object.entries(getTableColumns(table))
    columnsByTable.set(table, columns)
  }
  const row: Record<string, unknown> = {}
  for (const [key, column] of columns) {
    const value = source[column.name]
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value)
  }
  return row
}
