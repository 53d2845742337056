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

describe('the lint rule that keeps JSON in SQL to jsonObjectSql', () => {
  // Only this rule, without type information: the rest of the configuration is not under test.
  const lint = async (filePath: string, code: string) => {
    const { ESLint } = await import('eslint')
    const eslint = new ESLint({
      ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax',
      overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
    })
    const [result] = await eslint.lintText(code, { filePath })
    return result!.messages.map((message) => `${message.ruleId ?? 'parser'}:${message.line}`)
  }
  const handWritten = ["import { sql } from 'drizzle-orm'", "export const a = sql`(select json_build_object('email', u.email) from users u)`", "export const b = 'JSONB_BUILD_OBJECT(1)'"].join('\n')

  it('refuses json_build_object and jsonb_build_object, in template literals and strings, in a module', async () => {
    expect(await lint('src/modules/users/users.repository.ts', handWritten)).toEqual(['no-restricted-syntax:2', 'no-restricted-syntax:3'])
  })

  it('allows them in src/db/json-sql.ts, their one writer', async () => {
    expect(await lint('src/db/json-sql.ts', handWritten)).toEqual([])
  })
})
