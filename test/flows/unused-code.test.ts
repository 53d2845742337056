import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })

/**
 * Code that nothing but its own test runs is a second truth that drifts from the first (a fee
 * rounded in TypeScript while the statement rounds in SQL). knip follows the imports from the
 * entry points (`src/server.ts`, `src/cli.ts`, benchmarks, scripts; `knip.json`) without the tests,
 * and lists every export, and every file, that production code never reaches. A seam kept for
 * tests on purpose says so with `@internal` in its doc comment.
 */
describe('unused code', () => {
  it('knip finds no export and no file that only tests reach', async () => {
    const knip = join(ROOT, 'node_modules', 'knip', 'bin', 'knip.js')
    const run = promisify(execFile)(process.execPath, [knip, '--production', '--include', 'exports,nsExports,files', '--no-progress', '--reporter', 'compact'], { cwd: ROOT })
    const output = await run.then(
      (result) => result.stdout,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    )
    expect(output.trim()).toBe('')
  }, 60_000)

  it('keeps no factory member that nothing calls (knip does not see inside returned objects)', () => {
    // Members of repositories and services that were once left behind; a name here is free for new
    // code only with a caller.
    const removed = [/\binsert\(row: NewOrderRow\)/, /\bcategoryIdsWithin\b/, /\bresolveCategory\b(?!Ids)/, /\btransferSql:/, /\bplatformFeeCents\s*=/, /\bexport const placeholders\b/, /\browJsonSql\b/]
    const found = sourceFiles(join(ROOT, 'src')).flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      return removed.filter((pattern) => pattern.test(text)).map((pattern) => `${relative(ROOT, file)}: ${pattern.source}`)
    })
    expect(found).toEqual([])
  })
})
