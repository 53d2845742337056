import { getTableColumns, type Column } from 'drizzle-orm'
import type { PgTable } from 'drizzle-orm/pg-core'

/**
 * A table's row that a statement answered as JSON (`row_to_json`), decoded column by column as
 * Drizzle would (timestamps to dates, bigints to numbers), so the caller gets the same row type as
 * from a query of its own.
 */

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
