/**
 * Fuzzes every operation of the served OpenAPI document with malformed path parameters, query
 * strings and bodies, as an anonymous caller and as a superuser, and asserts that no answer is a
 * 5xx and that every answer is the API's JSON envelope.
 *
 *   npx vitest run test/flows/fuzz.test.ts
 *   FUZZ_ONLY='POST /api/v1/services' ...   only the operations whose "METHOD path" contains this
 *   FUZZ_RUNS=50 ...                         random cases per operation (default 15)
 *   FUZZ_SEED=1 ...                          another seed, to explore (default 20261123)
 *   FUZZ_REPORT=/tmp/fuzz.json ...           record every failing request instead of stopping at the
 *                                            first one per operation (no shrinking), write them there
 *
 * A failure prints the request (method, URL, content type and the body, or a recipe for bodies too
 * big to print, such as `("a" × 200000)`) with fast-check's seed and path to replay it.
 */
import { writeFileSync } from 'node:fs'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSuperuser } from '../factories/users.ts'
import { classicCases } from '../fuzz/examples.ts'
import { createFixtures, knownValues, servedOperations, type Fixtures } from '../fuzz/fixtures.ts'
import { operationName, type Operation } from '../fuzz/openapi.ts'
import { caseArbitrary, describeCase, WILDCARD, type CaseSources, type FuzzCase } from '../fuzz/requests.ts'
import { createTestApp, request, type TestContext } from '../setup/test-app.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)
const RUNS = Number(process.env.FUZZ_RUNS ?? 15)
const ONLY = process.env.FUZZ_ONLY
const REPORT = process.env.FUZZ_REPORT
/**
 * Caps one operation's run, shrinking included, so a request that hangs cannot stall the file. An
 * operation takes about a second on an idle machine: the cap is far above what a busy one needs.
 */
const OPERATION_LIMIT_MS = 60_000

type Caller = 'anonymous' | 'superuser'

interface Failure {
  operation: string
  caller: Caller
  status: number
  problem: string
  request: string
  response: string
}

const clip = (text: string, max = 600) => (text.length > max ? `${text.slice(0, max)}… <${text.length} chars>` : text)

/** Why an answer breaks the contract, or undefined when it keeps it. */
function contractBreach(operation: Operation, response: LightMyRequestResponse): string | undefined {
  const status = response.statusCode
  if (status >= 500) return `server error ${status}`
  const success = status >= 200 && status < 300
  // Files (and 304 Not Modified for them) and the HTML documentation page are not JSON when found.
  const isFile = operation.path.includes(`{${WILDCARD}}`) || operation.path.startsWith('/docs')
  if (isFile && (success || status === 304)) return undefined
  if (!success && status < 400) return `unexpected status ${status}`
  // No Content: nothing to wrap (saving a service, removing it).
  if (status === 204) return response.body === '' ? undefined : 'a 204 with a body'
  const contentType = String(response.headers['content-type'] ?? '')
  if (!contentType.startsWith('application/json')) return `content-type ${JSON.stringify(contentType)}, not JSON`
  let body: unknown
  try {
    body = JSON.parse(response.body)
  } catch {
    return 'body is not JSON'
  }
  if (typeof body !== 'object' || body === null) return 'body is not an object'
  const envelope = body as { success?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown; details?: unknown } }
  if (success) return envelope.success === true && 'data' in envelope ? undefined : 'a 2xx without { success: true, data }'
  const error = envelope.error
  if (envelope.success !== false || typeof error !== 'object' || error === null) return 'a 4xx without { success: false, error }'
  if (typeof error.code !== 'string' || error.code === '') return 'error.code is not a string'
  if (typeof error.message !== 'string') return 'error.message is not a string'
  if (!Array.isArray(error.details)) return 'error.details is not an array'
  const badDetail = (error.details as unknown[]).find(
    (detail) => typeof detail !== 'object' || detail === null || typeof (detail as { field?: unknown }).field !== 'string' || typeof (detail as { message?: unknown }).message !== 'string',
  )
  return badDetail === undefined ? undefined : `error.details holds ${JSON.stringify(badDetail)}, not { field, message }`
}

describe('fuzz: every operation of the OpenAPI document', () => {
  let ctx: TestContext
  let operations: Operation[] = []
  let fixtures: Fixtures
  let sources: CaseSources
  let requests = 0
  const failures: Failure[] = []
  const timings = new Map<string, number>()
  const statuses = new Map<number, number>()

  beforeAll(async () => {
    ctx = await createTestApp()
    operations = await servedOperations(ctx)
    fixtures = await createFixtures(ctx)
    sources = { known: knownValues(fixtures), png: fixtures.png }
  })

  afterAll(async () => {
    const slowest = [...timings].sort((a, b) => b[1] - a[1]).slice(0, 5)
    console.info(
      `fuzz: ${requests} requests to ${timings.size} operations; answers: ${[...statuses]
        .sort((a, b) => a[0] - b[0])
        .map(([status, count]) => `${status}×${count}`)
        .join(' ')}; slowest operations: ${slowest.map(([name, ms]) => `${name} ${Math.round(ms)} ms`).join(', ')}`,
    )
    if (REPORT) writeFileSync(REPORT, JSON.stringify(failures, null, 2))
    await ctx?.close()
  })

  /** Sends the case as both callers; throws (or, with FUZZ_REPORT, records) on a breach. */
  async function send(fuzzCase: FuzzCase): Promise<void> {
    const { operation, body } = fuzzCase
    for (const caller of ['anonymous', 'superuser'] as Caller[]) {
      // Logging out revokes the session it is sent with: give it its own.
      const token = caller === 'anonymous' ? undefined : operation.path.endsWith('/auth/logout') ? (await createSuperuser(ctx)).accessToken : fixtures.superuser.accessToken
      const headers: Record<string, string> = { ...fuzzCase.headers }
      if (body.contentType !== undefined) headers['content-type'] = body.contentType
      if (token) headers.authorization = `Bearer ${token}`
      const response = await ctx.app.inject({ method: operation.method, url: fuzzCase.url, headers, ...(body.payload !== undefined && { payload: body.payload }) })
      requests++
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
      const problem = contractBreach(operation, response)
      if (problem === undefined) continue
      const failure: Failure = { operation: operationName(operation), caller, status: response.statusCode, problem, request: describeCase(fuzzCase), response: clip(response.body) }
      if (REPORT) {
        failures.push(failure)
        continue
      }
      throw new Error(`${caller} caller: ${problem}\n  answer ${response.statusCode}: ${failure.response}`)
    }
  }

  it('reads the operations from the document', () => {
    expect(operations.length).toBeGreaterThan(60)
    const names = operations.map(operationName)
    for (const expected of ['POST /api/v1/auth/refresh', 'PATCH /api/v1/users/me', 'GET /api/v1/services', 'GET /api/v1/uploads/{path}', 'POST /api/v1/uploads']) {
      expect(names).toContain(expected)
    }
  })

  it('answers malformed requests with a 2xx or a 4xx envelope, never a 5xx', { timeout: 600_000 }, async () => {
    const breaches: string[] = []
    for (const operation of operations) {
      const name = operationName(operation)
      if (ONLY && !name.includes(ONLY)) continue
      const started = performance.now()
      const examples = classicCases(operation, sources, SEED).map((fuzzCase): [FuzzCase] => [fuzzCase])
      try {
        await fc.assert(
          fc.asyncProperty(caseArbitrary(operation, sources), (fuzzCase) => send(fuzzCase)),
          {
            seed: SEED,
            // fast-check counts the examples among the runs: RUNS random cases come after them.
            numRuns: examples.length + RUNS,
            examples,
            // The report then carries the answer (status and body), not only the request.
            includeErrorInReport: true,
            plugins: [fc.interruptAfterTimeLimit(OPERATION_LIMIT_MS, { failOnInterrupt: true })],
          },
        )
      } catch (error) {
        breaches.push(`${name}\n${(error as Error).message}`)
      }
      timings.set(name, performance.now() - started)
    }
    if (REPORT && failures.length > 0) {
      const groups = new Map<string, Failure[]>()
      for (const failure of failures) {
        const key = `${failure.operation}: ${failure.problem.replace(/\d+ ms \(/, 'N ms (')}`
        groups.set(key, [...(groups.get(key) ?? []), failure])
      }
      const summary = [...groups].map(([key, group]) => `${key} (${group.length}×), e.g. ${group[0]!.caller}:\n  ${group[0]!.request}\n  answer: ${group[0]!.response}`)
      expect.fail(`${failures.length} failing requests in ${groups.size} groups, all written to ${REPORT}:\n\n${summary.join('\n\n')}`)
    }
    if (breaches.length > 0) expect.fail(`${breaches.length} operation(s) broke the contract:\n\n${breaches.join('\n\n')}`)
  })

  it('still has a working superuser session (the fuzzing did not lock itself out)', async () => {
    const me = await request(ctx.app, { method: 'GET', url: '/users/me', token: fixtures.superuser.accessToken })
    expect(me.statusCode, me.body).toBe(200)
  })
})
