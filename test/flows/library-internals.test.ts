import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })

/** A file allowed to lean on a library's undocumented parts: one small adapter, pinned by its test to the release it supports. */
const isAdapter = (file: string) => basename(file).endsWith('-adapter.ts')

/** The package a bare specifier names, and the path inside it (empty for the package's entry). */
function packageOf(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split('/')
  const length = specifier.startsWith('@') ? 2 : 1
  return { name: parts.slice(0, length).join('/'), subpath: parts.slice(length).join('/') }
}

const packageJson = (name: string): { exports?: unknown } | undefined => {
  const path = join(ROOT, 'node_modules', name, 'package.json')
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { exports?: unknown }) : undefined
}

/** Classes a library exports without documenting them for applications: subclassing or calling them ties the app to one release. */
const UNDOCUMENTED = [/\bPgSession\b/, /\bPgPreparedQuery\b/, /\bkReplyHeaders\b/]

describe('reaches into library internals', () => {
  it('happen only in *-adapter.ts files: no deep path into a package without an exports map, no undocumented class', () => {
    const found = sourceFiles(join(ROOT, 'src'))
      .filter((file) => !isAdapter(file))
      .flatMap((file) => {
        const text = readFileSync(file, 'utf8')
        const specifiers = [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)'([^'.][^']*)'/g)].map((match) => match[1]!).filter((specifier) => !specifier.startsWith('node:'))
        // A package with an `exports` map lists its public entry points, and Node refuses any
        // other path; without one, every file of the package is reachable, and none is a promise.
        const deep = specifiers.filter((specifier) => {
          const { name, subpath } = packageOf(specifier)
          return subpath !== '' && packageJson(name)?.exports === undefined
        })
        const named = UNDOCUMENTED.filter((pattern) => pattern.test(text)).map((pattern) => pattern.source)
        return [...deep, ...named].map((what) => `${relative(ROOT, file)}: ${what}`)
      })
    expect(found, 'put it behind one small *-adapter.ts file whose test pins the release it supports, or use the library’s public API').toEqual([])
  })
})
