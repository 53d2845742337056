import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { parse } from 'yaml'
import { beforeAll, describe, expect, it } from 'vitest'
import { openApiDocument } from '../../scripts/openapi-document.ts'

describe('the OpenAPI document', () => {
  let document: Record<string, unknown>
  beforeAll(async () => {
    document = await openApiDocument()
  })

  it("has no error by Redocly's recommended rules (redocly.yaml)", async () => {
    const rules = parse(readFileSync(join(import.meta.dirname, '..', '..', 'redocly.yaml'), 'utf8')) as Record<string, unknown>
    const config = await createConfig(rules)
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: '/openapi.json', config })
    const errors = problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)
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
