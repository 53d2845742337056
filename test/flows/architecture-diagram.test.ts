import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { appModules } from '../../src/modules/index.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const MODULES = join(ROOT, 'src', 'modules')

/** The module diagram of docs/architecture.md: its first mermaid block. */
function diagram(): string {
  const text = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8')
  const start = text.indexOf('```mermaid')
  return text.slice(start, text.indexOf('```', start + 3))
}

const sorted = (edges: Iterable<string>) => [...new Set(edges)].sort()

describe('the module diagram in docs/architecture.md', () => {
  const names = new Set<string>(appModules.map((module) => module.name))
  const lines = diagram().split('\n')

  it('draws every module’s needs as a thin arrow, and no other', () => {
    const drawn = lines.flatMap((line) => {
      const match = /^\s*(\w+) --> (\w+)\s*$/.exec(line)
      return match && names.has(match[1]!) ? [`${match[1]} --> ${match[2]}`] : []
    })
    const declared = appModules.flatMap((module) => module.needs.map((need) => `${module.name} --> ${need}`))
    expect(sorted(drawn)).toEqual(sorted(declared))
  })

  it('draws every registration of one module into another as a thick arrow, and no other', () => {
    const drawn = lines.flatMap((line) => {
      const match = /^\s*(\w+) ==>\|[^|]*\| (\w+)\s*$/.exec(line)
      return match ? [`${match[1]} ==> ${match[2]}`] : []
    })
    // A registration is a call `<module>.register<Something>(...)` on another module's API, made
    // by the module that hands it a function.
    const found = appModules.flatMap((module) =>
      readdirSync(join(MODULES, module.name))
        .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
        .flatMap((file) => [...readFileSync(join(MODULES, module.name, file), 'utf8').matchAll(/\b(\w+)\.register[A-Z]\w*\(/g)])
        .map((match) => match[1]!)
        .filter((target) => names.has(target) && target !== module.name)
        .map((target) => `${module.name} ==> ${target}`),
    )
    expect(found.length).toBeGreaterThanOrEqual(5)
    expect(sorted(drawn)).toEqual(sorted(found))
  })
})
