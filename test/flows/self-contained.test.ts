import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const SELF = 'test/flows/self-contained.test.ts'

/**
 * Tracked files nobody edits: benchmark outputs are a record of past runs, a migration never
 * changes once it has landed, and the lockfile is written by npm.
 */
const FROZEN = [/^bench\/results\//, /^migrations\//, /^package-lock\.json$/]

/** References a reader of a clone cannot follow, and what each points at. */
const OUTSIDE: { pattern: RegExp; what: string }[] = [
  { pattern: /\bDESIGN\b/, what: 'a design document that is not in the repository' },
  { pattern: /\bSTYLE\.md\b/, what: 'a style guide that is not in the repository' },
  { pattern: /\.\.\/shared\b|\/work\/shared\b/, what: 'a folder outside the repository' },
  { pattern: /\bspec(?:ification)?(?:'s)?\s+(?:section\s+|§\s*)?\d/i, what: 'a numbered section of a specification the repository does not hold' },
  { pattern: /\bspec(?:ification)?(?:'s)?\s+section\b/i, what: 'a section of a specification the repository does not hold' },
  { pattern: /\bthe spec(?:ification)?\b/i, what: 'a specification the repository does not hold' },
  { pattern: /\bissues?\s+#?\d+/i, what: 'an issue of a tracker the repository does not hold' },
]

/** The files git tracks, and new ones it would (not ignored), so a file is checked before its first commit. */
const trackedFiles = (): string[] =>
  execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && file !== SELF && !FROZEN.some((pattern) => pattern.test(file)) && existsSync(join(ROOT, file)))

/**
 * Every rule the code, the documents and the OpenAPI text cite is stated where it applies or in a
 * file under `docs/` (docs/api-conventions.md for the HTTP contract, docs/orders.md, the
 * decisions). A citation of a document, a section number or an issue that only its first authors
 * had is a dead end for everyone who clones the project.
 */
describe('the repository stands on its own', () => {
  it('cites no document, specification section or issue outside the repository', () => {
    const found = trackedFiles().flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8')
      if (text.includes('\0')) return []
      return text.split('\n').flatMap((line, index) =>
        OUTSIDE.filter(({ pattern }) => pattern.test(line)).map(({ what }) => `${file}:${index + 1}: ${what}: ${line.trim().slice(0, 160)}`),
      )
    })
    expect(found, 'state the rule where it applies, or point to a file under docs/').toEqual([])
  })

  it('reads the tracked files, the generated client and the documents included', () => {
    const files = trackedFiles()
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/api-conventions.md', 'clients/ts/schema.ts', 'src/app.ts', 'eslint.config.js', 'Dockerfile']))
    expect(files.some((file) => file.startsWith('migrations/') || file.startsWith('bench/results/'))).toBe(false)
  })
})
