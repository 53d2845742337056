import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { openApiDocument } from '../../scripts/openapi-document.ts'

const ROOT = join(import.meta.dirname, '..', '..')

/**
 * The served OpenAPI document, as a production deployment on https serves it, linted by the two
 * tools integrators use: Redocly (recommended rules, `redocly.yaml`) and Spectral with the OWASP
 * API Security ruleset (`.spectral.mjs`, where every rule turned off says why). Zero errors.
 */
describe('the OpenAPI document', () => {
  let document: Record<string, unknown>
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-lint-'))
  beforeAll(async () => {
    document = await openApiDocument({ publicUrl: 'https://api.marketplace.test', env: 'production' })
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("has no error by Redocly's recommended rules", async () => {
    const rules = parse(readFileSync(join(ROOT, 'redocly.yaml'), 'utf8')) as Record<string, unknown>
    const config = await createConfig(rules)
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: '/openapi.json', config })
    const errors = problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)
    expect(errors).toEqual([])
  })

  it('has no error by Spectral with the OWASP API Security ruleset', async () => {
    const file = join(dir, 'openapi.json')
    writeFileSync(file, JSON.stringify(document))
    const spectral = join(ROOT, 'node_modules', '@stoplight', 'spectral-cli', 'dist', 'index.js')
    // Spectral exits 1 when it finds errors; the JSON report says which.
    const output = await promisify(execFile)(process.execPath, [spectral, 'lint', file, '--ruleset', join(ROOT, '.spectral.mjs'), '--format', 'json', '--quiet'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }).then(
      (result) => result.stdout,
      (error: { stdout?: string }) => error.stdout ?? '[]',
    )
    const problems = JSON.parse(output) as { code: string; severity: number; message: string; path: string[] }[]
    const errors = problems.filter((problem) => problem.severity === 0).map((problem) => `${problem.code}: ${problem.message} at ${problem.path.join('/')}`)
    expect(errors).toEqual([])
  })

  it('gives every operation a unique operationId and declares its security', () => {
    const ids = new Set<string>()
    for (const item of Object.values(document.paths as Record<string, Record<string, { operationId?: string; security?: unknown }>>)) {
      for (const operation of Object.values(item)) {
        expect(operation.operationId).toMatch(/^(get|put|post|delete|patch)[A-Z]\w*$/)
        expect(ids.has(operation.operationId!), operation.operationId).toBe(false)
        ids.add(operation.operationId!)
        expect(operation.security).toBeDefined()
      }
    }
  })
})
