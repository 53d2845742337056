import { Type } from '@sinclair/typebox'
import { sql, type SQLWrapper } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { describe, expect, it } from 'vitest'
import { JsonText, jsonObjectSql } from './json-sql.ts'

const Item = Type.Object({ id: Type.String(), price: Type.Number(), note: Type.Union([Type.String(), Type.Null()]) })
const text = (built: SQLWrapper) => new PgDialect().sqlToQuery(built.getSQL())

describe('a JSON object built in SQL from a response schema', () => {
  it("names exactly the schema's properties, in the schema's order, whatever order the fields come in", () => {
    const built = text(jsonObjectSql(Item, { note: sql`i.note`, price: sql`i.price_cents / 100.0`, id: sql`i.id` }))
    expect(built.sql).toBe(`json_build_object('id', i.id, 'price', i.price_cents / 100.0, 'note', i.note)`)
    expect(built.params).toEqual([])
  })

  it('refuses a field the schema does not name, and a property left out, naming them', () => {
    const leaked = { id: sql`i.id`, price: sql`i.price`, note: sql`i.note`, passwordHash: sql`i.password_hash` }
    expect(() => jsonObjectSql(Item, leaked)).toThrow('passwordHash is not in the schema')
    const partial = { id: sql`i.id`, price: sql`i.price` } as unknown as Parameters<typeof jsonObjectSql<typeof Item>>[1]
    expect(() => jsonObjectSql(Item, partial)).toThrow('note is missing')
  })

  it('refuses a property name that SQL would have to quote', () => {
    const Odd = Type.Object({ "it's": Type.String() })
    expect(() => jsonObjectSql(Odd, { "it's": sql`1` })).toThrow('cannot be written into SQL')
  })

  it('keeps values as parameters, never as SQL text', () => {
    const built = text(jsonObjectSql(Item, { id: sql`${"'; drop table users; --"}`, price: sql`1`, note: sql`null` }))
    expect(built.sql).toBe(`json_build_object('id', $1, 'price', 1, 'note', null)`)
    expect(built.params).toEqual(["'; drop table users; --"])
  })
})

describe('JSON text', () => {
  it('parses to its value', () => {
    const value = { id: 'a', price: 1.5, note: null }
    expect(new JsonText<typeof value>(JSON.stringify(value)).parse()).toEqual(value)
  })
})
