import { sql, type Name, type Placeholder, type SQL } from 'drizzle-orm'
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core'
import type { Static, TObject } from '@sinclair/typebox'

/**
 * SQL one module lends another, typed at the boundary: the borrower reads a lent relation's
 * columns, a lent JSON object's keys and a statement's placeholders through typed properties, never
 * by writing a name the lender owns. A rename in the lender then fails to compile in the borrower,
 * instead of failing at run time in another module's statement.
 */

const identifier = /^[a-z_][a-z0-9_]*$/

/** The `sql.placeholder` of a statement whose values are `Values`: a name that is not a key of them does not compile. */
export const placeholdersOf =
  <Values extends object>() =>
  (name: keyof Values & string): Placeholder =>
    sql.placeholder(name)

/**
 * A SELECT lent as the body of a CTE or a subquery, with its output columns: `sql` is the body,
 * `columnsOf(alias)` the borrower's references to its columns under the name it gives the CTE.
 */
export interface LentRelation<Row> {
  readonly sql: SQL
  columnsOf(alias: string): { [Key in keyof Row]-?: SQL<Row[Key]> }
}

/**
 * Builds a lent relation from its columns' SQL names (one per key of `Row`) and its body, which
 * names its output columns with `as` (`select p.price_cents as ${as.priceCents}`), so the body and
 * the columns a borrower reads cannot drift apart.
 */
export function lentRelation<Row>(names: { [Key in keyof Row]-?: string }, body: (as: { [Key in keyof Row]-?: Name }) => SQL): LentRelation<Row> {
  const entries = Object.entries(names as Record<string, string>)
  const bad = entries.find(([, name]) => !identifier.test(name))
  if (bad) throw new Error(`the column name ${JSON.stringify(bad[1])} is not a plain SQL identifier`)
  const as = Object.fromEntries(entries.map(([key, name]) => [key, sql.identifier(name)])) as { [Key in keyof Row]-?: Name }
  return {
    sql: body(as),
    columnsOf: (alias) => columnsUnder(alias, names),
  }
}

/** References to the columns `names` under `alias`: `"alias"."column"`. */
function columnsUnder<Row>(alias: string, names: { [Key in keyof Row]-?: string }): { [Key in keyof Row]-?: SQL<Row[Key]> } {
  if (!identifier.test(alias)) throw new Error(`the alias ${JSON.stringify(alias)} is not a plain SQL identifier`)
  return Object.fromEntries(Object.entries(names as Record<string, string>).map(([key, name]) => [key, sql`${sql.identifier(alias)}.${sql.identifier(name)}`])) as {
    [Key in keyof Row]-?: SQL<Row[Key]>
  }
}

/**
 * A relation of a module's own table under a name in a statement (a CTE that returns its rows),
 * lent to another module with the columns it may read: `name` for its FROM, and each column
 * referenced by its key, named as the table names it.
 */
export interface TableRelation<Keys extends string> {
  readonly name: Name
  readonly columns: { [Key in Keys]-?: SQL }
}

export function tableRelation<Table extends PgTable, Keys extends keyof Table['_']['columns'] & string>(alias: string, table: Table, keys: readonly Keys[]): TableRelation<Keys> {
  const columns = table as unknown as Record<Keys, PgColumn>
  const names = Object.fromEntries(keys.map((key) => [key, columns[key].name])) as { [Key in Keys]-?: string }
  return { name: sql.identifier(alias), columns: columnsUnder<Record<Keys, unknown>>(alias, names) }
}

/**
 * The keys of a JSON object built from `schema` (`jsonObjectSql`), read as text from the SQL
 * expression `json` that holds it: `(json->>'key')`. A key the schema does not name does not
 * compile.
 */
export function jsonFieldsSql<Schema extends TObject>(schema: Schema, json: SQL): { [Key in keyof Static<Schema> & string]-?: SQL<string | null> } {
  const bad = Object.keys(schema.properties).find((key) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
  if (bad !== undefined) throw new Error(`the property name ${JSON.stringify(bad)} cannot be written into SQL as it is`)
  return Object.fromEntries(Object.keys(schema.properties).map((key) => [key, sql<string | null>`(${json}->>${sql.raw(`'${key}'`)})`])) as {
    [Key in keyof Static<Schema> & string]-?: SQL<string | null>
  }
}
