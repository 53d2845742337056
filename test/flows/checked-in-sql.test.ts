import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { declaredStatements } from '../../src/db/statements.ts'
import { generatedStatementFiles, STATEMENTS_DIR } from '../../scripts/sql-statements.ts'
import { createTestApp, type TestContext } from '../setup/test-app.ts'

const checkedIn = (): Record<string, string> =>
  existsSync(STATEMENTS_DIR) ? Object.fromEntries(readdirSync(STATEMENTS_DIR).map((name) => [name, readFileSync(join(STATEMENTS_DIR, name), 'utf8')])) : {}

describe('the checked-in SQL of every prepared statement (sql/statements/)', () => {
  it('is the text each statement is built with: no file differs, is missing or is left over', async () => {
    const generated = await generatedStatementFiles()
    const files = checkedIn()
    const differing = Object.keys(generated).filter((name) => name in files && files[name] !== generated[name])
    const missing = Object.keys(generated).filter((name) => !(name in files))
    const extra = Object.keys(files).filter((name) => !(name in generated))
    const problems = [
      ...differing.map((name) => `sql/statements/${name} differs from the statement's text`),
      ...missing.map((name) => `sql/statements/${name} is missing`),
      ...extra.map((name) => `sql/statements/${name} belongs to no statement`),
    ]
    expect(problems, `${problems.join('\n')}\nrun npm run sql:generate and review the diff`).toEqual([])
    // Every statement the application runs is there, those it builds on first use included.
    expect(Object.keys(generated)).toEqual(expect.arrayContaining(['orders_place.sql', 'catalogue_service_by_id.sql', 'catalogue_list_slug_price_asc_keyset_21.sql', 'catalogue_search_ref_101_facets.sql', 'catalogue_filtered_none_price_asc_21_narrowed.sql', 'catalogue_saved_page.sql', 'users_by_id.sql']))
  })

  describe('on the database the tests run on', () => {
    let ctx: TestContext
    beforeAll(async () => {
      ctx = await createTestApp()
    })
    afterAll(() => ctx.close())

    it('is the text the app sends there too: the text does not depend on the driver or the configuration', () => {
      const files = checkedIn()
      const statements = declaredStatements()
      expect(statements.length).toBe(Object.keys(files).length)
      const differing = statements.filter(({ name, text }) => !files[`${name}.sql`]?.endsWith(`\n${text.trimEnd()}\n`)).map(({ name }) => name)
      expect(differing, `built differently on ${ctx.database.kind}: run npm run sql:generate, and keep statement text independent of the database`).toEqual([])
    })
  })
})
