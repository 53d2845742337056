import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { is } from 'drizzle-orm'
import { PgTable } from 'drizzle-orm/pg-core'
import { describe, expect, it } from 'vitest'
import { appModules } from './index.ts'

const MODULES_DIR = fileURLToPath(new URL('.', import.meta.url))

describe('the module list', () => {
  it('lists every module after the modules it needs, once', () => {
    const seen = new Set<string>()
    for (const module of appModules) {
      expect(seen.has(module.name), `${module.name} is listed twice`).toBe(false)
      for (const need of module.needs) expect(seen.has(need), `${module.name} needs ${need}, which must come earlier`).toBe(true)
      seen.add(module.name)
    }
  })

  it("declares every table of every module's *.table.ts files in exactly one module", async () => {
    const declared = appModules.flatMap((module) => Object.values(module.tables))
    expect(new Set(declared).size).toBe(declared.length)
    const tableFiles = readdirSync(MODULES_DIR, { recursive: true }).map(String).filter((name) => name.endsWith('.table.ts'))
    const defined: unknown[] = []
    for (const file of tableFiles) {
      const exports = (await import(new URL(file, new URL(`file://${MODULES_DIR}`)).href)) as Record<string, unknown>
      defined.push(...Object.values(exports).filter((value) => is(value, PgTable)))
    }
    expect(defined.length).toBeGreaterThan(0)
    for (const table of defined) expect(declared, 'a table no module declares').toContain(table)
    expect(declared).toHaveLength(defined.length)
  })

  it('declares each event once, with a data schema, and the events receivers rely on', () => {
    const events = appModules.flatMap((module) => module.events ?? [])
    const names = events.map((event) => event.name)
    expect(new Set(names).size).toBe(names.length)
    expect(names).toEqual(expect.arrayContaining(['service.approved', 'service.rejected', 'payout.processed', 'payout.rejected', 'kyc.approved', 'kyc.rejected', 'order.created', 'order.completed']))
    for (const event of events) {
      expect(event.name).toMatch(/^[a-z]+\.[a-z_]+$/)
      expect(event.data.type).toBe('object')
      expect(event.description.length).toBeGreaterThan(0)
    }
  })

  it('names its modules as their folders', () => {
    const folders = readdirSync(MODULES_DIR, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
    expect(appModules.map((module) => module.name).sort()).toEqual(folders.sort())
  })
})
