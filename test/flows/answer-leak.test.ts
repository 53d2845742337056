import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')
const REPOSITORY = 'src/modules/users/users.repository.ts'
const ROUTE_TESTS = 'src/modules/catalogue/services.routes.test.ts'

interface Report {
  numPassedTests: number
  numFailedTests: number
  testResults: { assertionResults: { status: string; failureMessages: string[] }[] }[]
}

/**
 * The public user summary is built in SQL from its schema, and `GET /services/{id}` sends that
 * JSON as text. A careless edit that adds a private field to the fragment's schema, and not to
 * the answer's, must fail the catalogue's own route tests instead of reaching clients: here the
 * edit is made in a copy of the repository, and the tests are run there.
 */
describe('a private field added to the user summary built in SQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mk-answer-leak-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('fails the route tests of an answer that carries the summary', async () => {
    for (const entry of ['src', 'test', 'migrations', 'package.json', 'tsconfig.json', 'vitest.config.ts', 'drizzle.config.ts']) {
      cpSync(join(ROOT, entry), join(dir, entry), { recursive: true })
    }
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
    const file = join(dir, REPOSITORY)
    const source = readFileSync(file, 'utf8')
    const careless = source.replace(
      'jsonObjectSql(UserSummary, { id: users.id,',
      'jsonObjectSql(Type.Object({ ...UserSummary.properties, email: Type.String() }), { email: users.email, id: users.id,',
    )
    expect(careless, `${REPOSITORY} no longer builds the summary as this test expects`).not.toBe(source)
    writeFileSync(file, `import { Type } from '@sinclair/typebox'\n${careless}`)

    const outcome = await promisify(execFile)('npx', ['vitest', 'run', '--project', 'suite', '--reporter=json', '--outputFile=report.json', ROUTE_TESTS], {
      cwd: dir,
      env: process.env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: unknown) => error)
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report
    const failures = report.testResults.flatMap((file) => file.assertionResults.flatMap((test) => test.failureMessages)).join('\n')
    expect(outcome).toBeInstanceOf(Error)
    // The copy ran (most tests pass) and failed where the summary is sent as text: a 500, not a leak.
    expect(report.numPassedTests).toBeGreaterThan(10)
    expect(report.numFailedTests).toBeGreaterThan(0)
    expect(failures).toMatch(/expected 500 to be 200/)
  }, 300_000)
})
