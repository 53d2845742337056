import { sql, type SQL, type SQLWrapper } from 'drizzle-orm'
import type { Static, TObject } from '@sinclair/typebox'

const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * `json_build_object(...)` with exactly the properties of a response schema, in the schema's
 * order: one SQL expression per property, none more, none fewer (the type asks for each, and
 * the call throws when built if the keys differ, e.g. through a spread). The schema is then the
 * statement's allow-list, as it is the serializer's for an answer built in Node (decision 0091):
 * a column the schema does not name cannot reach the answer. Nested objects are built the same
 * way with their own schemas; the non-production check in http/json-text.ts compares every
 * answer sent as text with what the route's serializer would send.
 */
export function jsonObjectSql<Schema extends TObject>(schema: Schema, fields: { [Key in keyof Static<Schema>]-?: SQLWrapper }): SQL<Static<Schema>> {
  const names = Object.keys(schema.properties)
  const given = fields as Record<string, SQLWrapper>
  const extra = Object.keys(given).filter((name) => !Object.hasOwn(schema.properties, name))
  const missing = names.filter((name) => !Object.hasOwn(given, name))
  if (extra.length > 0 || missing.length > 0) {
    throw new Error(`the JSON does not match its schema: ${[...extra.map((name) => `${name} is not in the schema`), ...missing.map((name) => `${name} is missing`)].join(', ')}`)
  }
  const bad = names.find((name) => !PROPERTY_NAME.test(name))
  if (bad !== undefined) throw new Error(`the property name ${JSON.stringify(bad)} cannot be written into SQL as it is`)
  // json_build_object takes at most 100 arguments: two per property.
  if (names.length > 50) throw new Error(`a JSON object built in SQL holds at most 50 properties, not ${names.length}`)
  return sql<Static<Schema>>`json_build_object(${sql.join(
    names.map((name) => sql`${sql.raw(`'${name}'`)}, ${given[name]}`),
    sql`, `,
  )})`
}

/**
 * An answer's `data` as the JSON text a statement built with `jsonObjectSql` (T is its type). A
 * route sends it as it is (http/json-text.ts) instead of parsing it into objects and serialising
 * them again, which cost a read of one service a third of its CPU.
 */
export class JsonText<T> {
  declare readonly type: T
  constructor(readonly text: string) {}

  /** The parsed value, for the rare answer that Node changes before it is sent. */
  parse(): T {
    return JSON.parse(this.text) as T
  }
}
