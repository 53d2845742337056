import fc from 'fast-check'
import { arbitraryFromSchema, operationName, type KnownValues, type Operation, type Parameter } from './openapi.ts'
import { bodiesForNoBody, jsonBodies, multipartBodies, wrongBodiesForMultipart, type Body } from './payloads.ts'

/** One request, as sent: printed in full (or as a recipe) when fast-check reports a counterexample. */
export interface FuzzCase {
  operation: Operation
  /** Path and query string, already encoded as they go on the wire. */
  url: string
  /** Extra request headers (content type and authorization are set by the sender). */
  headers: Record<string, string>
  body: Body
  notes: string[]
}

/** The wildcard segment of the file route, named `path` in the document. */
export const WILDCARD = 'path'

/** Path segments on the wire (already percent-encoded where they need to be). */
export const GARBAGE_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '..%2F..%2Fetc%2Fpasswd',
  '%2F',
  '%5C',
  '%00',
  '%',
  '%zz',
  '%C0%AF',
  '%ED%A0%80',
  '%FF%FE',
  encodeURIComponent('ünïcödé 😀'),
  encodeURIComponent('\u202e\u0000'),
  '%20',
  'null',
  'undefined',
  '0',
  '-1',
  '1e308',
  'true',
  '__proto__',
  'constructor',
  encodeURIComponent("' OR 1=1 --"),
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '0190a000-0000-7000-8000-00000000abcd',
  '0190a000-0000-7000-8000-00000000abcdX',
  '%7B0190a000-0000-7000-8000-00000000abcd%7D',
  '0190a000000070008000000000000abcd',
  'a'.repeat(101),
  'b'.repeat(600),
  'c'.repeat(2049),
  'd'.repeat(5000),
  '%41'.repeat(700),
]

const garbageSegment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...GARBAGE_SEGMENTS) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30, unit: 'binary' }).map(encodeURIComponent) },
)

/** A value for one path parameter: a real id (when the test made one), a random UUID or junk. */
function pathValue(parameter: Parameter, known: KnownValues): fc.Arbitrary<string> {
  const real = known(parameter.name, parameter.schema)
  if (parameter.name === WILDCARD) {
    const segment = fc.oneof(
      { weight: 3, arbitrary: garbageSegment },
      { weight: 2, arbitrary: fc.constantFrom('a.png', 'avatars', 'public', 'private', 'x.pdf', '', 'index.html') },
      { weight: 1, arbitrary: fc.uuid() },
    )
    const randomPath = fc.array(segment, { minLength: 1, maxLength: 6 }).map((segments) => segments.join('/'))
    if (real.length === 0) return randomPath
    return fc.oneof(
      { weight: 3, arbitrary: randomPath },
      { weight: 1, arbitrary: fc.constantFrom(...real) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...real), garbageSegment).map(([path, junk]) => `${path}/${junk}`) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...real), garbageSegment).map(([path, junk]) => `${junk}/../${path}`) },
    )
  }
  return fc.oneof(
    ...(real.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...real) }] : []),
    { weight: 2, arbitrary: fc.uuid({ version: [1, 4, 7] }) },
    { weight: 3, arbitrary: garbageSegment },
  )
}

// ---------------------------------------------------------------------------------------------
// Query strings
// ---------------------------------------------------------------------------------------------

/** One `key=value` (or bare `key`) pair, already encoded for the wire. */
type Pair = [key: string, value: string | null]

const enc = (pairs: Pair[]): string => pairs.map(([key, value]) => (value === null ? key : `${key}=${value}`)).join('&')

export const QUERY_NUMBERS = ['1e308', '1e309', 'Infinity', '-Infinity', 'NaN', '21474836.48', '2147483648', '99999999999999999999999', '9007199254740993', '4.9e-324', '0x10', '1_000', '1,5', ' 1']
export const QUERY_NEGATIVES = ['-1', '-0', '-1e308', '-21474836.48', '-2147483649', '-0.01']
/** Text that breaks naive full-text (to_tsquery) and LIKE handling. */
export const SEARCH_JUNK = ['!', '&', '|', '&|!', ':*', "'", "''", '\\', '(', ')', 'a & | b', '!!!a', 'a:*B', '%', '_', '%_%', '<->', 'a <2> b', '*', '"', '""', ',', ',,,', 'a,,b', ' , ', '--', '/*', ';']
  .map(encodeURIComponent)

export const QUERY_WRONG = ['abc', 'true', '{}', '[]', 'null', '', '%20', encodeURIComponent('ünï😀'), '%00', '%', '%zz', '%ED%A0%80', '%FF', '+', '%2B1', encodeURIComponent("' OR 1=1 --")]

function queryMutation(parameters: Parameter[]): fc.Arbitrary<{ pairs: (base: Pair[]) => Pair[]; note: string }> {
  const names = parameters.map((parameter) => parameter.name)
  const name = names.length > 0 ? fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constantFrom('foo', '__proto__', 'constructor') }) : fc.constantFrom('foo', '__proto__', 'page')
  const setValue = (label: string, values: fc.Arbitrary<string>) =>
    fc.tuple(name, values).map(([key, value]) => ({
      pairs: (base: Pair[]) => [...base.filter(([other]) => other !== key), [key, value] as Pair],
      note: `${key}=${value.length > 60 ? `${value.slice(0, 60)}…<${value.length}>` : value} (${label})`,
    }))
  return fc.oneof(
    setValue('wrong type', fc.constantFrom(...QUERY_WRONG)),
    setValue('search syntax', fc.oneof(fc.constantFrom(...SEARCH_JUNK), fc.array(fc.constantFrom(...SEARCH_JUNK, 'a', 'logo', '%20'), { minLength: 2, maxLength: 6 }).map((parts) => parts.join('')))),
    setValue('huge number', fc.constantFrom(...QUERY_NUMBERS)),
    setValue('negative', fc.constantFrom(...QUERY_NEGATIVES)),
    setValue(
      'long',
      fc.constantFrom('a', '%41', encodeURIComponent('😀'), '%00', '1').chain((unit) => fc.integer({ min: 200, max: Math.floor(40_000 / unit.length) }).map((count) => unit.repeat(count))),
    ),
    fc.tuple(name, fc.array(fc.oneof(fc.constantFrom('1', '2', 'asc', 'price', 'x'), fc.constantFrom(...QUERY_WRONG)), { minLength: 2, maxLength: 5 })).map(([key, values]) => ({
      pairs: (base: Pair[]) => [...base.filter(([other]) => other !== key), ...values.map((value): Pair => [key, value])],
      note: `${key} repeated: ${values.join(', ')}`,
    })),
    fc.tuple(name, fc.constantFrom('[]', '[a]', '[0]', '.a', '%00')).map(([key, suffix]) => ({
      pairs: (base: Pair[]) => [...base, [`${key}${suffix}`, '1'] as Pair],
      note: `${key}${suffix}=1 (bracket key)`,
    })),
    name.map((key) => ({ pairs: (base: Pair[]) => [...base.filter(([other]) => other !== key), [key, null] as Pair], note: `${key} without a value` })),
    fc.constantFrom('foo=bar', 'isSuperuser=true', '__proto__=x', 'constructor[prototype]=1', 'hasOwnProperty=1', '=1', '&&&', '%=%', 'a'.repeat(300) + '=1').map((extra) => ({
      pairs: (base: Pair[]) => [...base, [extra, null] as Pair],
      note: `unknown parameter ${extra.slice(0, 60)}`,
    })),
  )
}

/** A valid-looking query string (with real ids where known), then 0 to 3 mutations. */
function queryString(parameters: Parameter[], known: KnownValues): fc.Arbitrary<{ query: string; notes: string[] }> {
  const base = fc
    .tuple(
      ...parameters.map((parameter) => {
        const pair = arbitraryFromSchema(parameter.schema, known, parameter.name).map((value): Pair => [parameter.name, encodeURIComponent(String(value))])
        // Required without a default: always there. Otherwise: there half of the time.
        return parameter.required && parameter.schema.default === undefined ? pair : fc.option(pair, { freq: 2, nil: undefined })
      }),
    )
    .map((pairs) => pairs.filter((pair): pair is Pair => pair !== undefined))
  const mutationCount = parameters.length > 0 ? { minLength: 0, maxLength: 3 } : { minLength: 0, maxLength: 1 }
  return fc.tuple(base, fc.array(queryMutation(parameters), mutationCount)).map(([pairs, mutations]) => ({
    query: enc(mutations.reduce((current, mutation) => mutation.pairs(current), pairs)),
    notes: mutations.map((mutation) => `query ${mutation.note}`),
  }))
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

export function fillPath(operation: Operation, values: Record<string, string>): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? '')
}

export const makeCase = (operation: Operation, pathValues: Record<string, string>, query: string, body: Body, notes: string[], headers: Record<string, string> = {}): FuzzCase => ({
  operation,
  url: `${fillPath(operation, pathValues)}${query ? `?${query}` : ''}`,
  headers,
  body,
  notes,
})

const RANGES = ['bytes=0-0', 'bytes=-1', 'bytes=0-', 'bytes=5-1', 'bytes=999999999-', 'bytes=0-1,2-3', 'bytes=0-1,0-1,0-1', 'bytes=abc', 'items=0-1', 'bytes=-0', 'bytes=0-99999999999999999999', 'bytes=', '', 'bytes=1e3-2e3']
const ETAGS = ['*', '"x"', 'W/"x"', '"', 'x'.repeat(2000), '"a", "b"']

/** Headers a client could get wrong: ranges and validators on downloads, odd ids and Accept elsewhere. */
function headersFor(operation: Operation): fc.Arbitrary<Record<string, string>> {
  const download = operation.path.includes(`{${WILDCARD}}`)
  const fields: Record<string, fc.Arbitrary<string>> = {
    'x-request-id': fc.constantFrom('a'.repeat(300), '../x', 'id with spaces', '', 'ok-id-1'),
    accept: fc.constantFrom('text/html', 'application/xml', '*/*', 'application/json;q=0', ''),
    ...(download && { range: fc.constantFrom(...RANGES), 'if-none-match': fc.constantFrom(...ETAGS) }),
  }
  const record = fc
    .record(fields, { requiredKeys: [] })
    .map((value) => Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => entry[1] !== undefined)))
  return fc.oneof({ weight: download ? 1 : 4, arbitrary: fc.constant({}) }, { weight: download ? 3 : 1, arbitrary: record })
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… <${text.length} chars in all>` : text)

/** The counterexample as a developer reads it: enough to replay the request by hand. */
export function describeCase(fuzzCase: FuzzCase): string {
  const lines = [`${fuzzCase.operation.method} ${clip(fuzzCase.url, 400)}   [${operationName(fuzzCase.operation)}]`]
  for (const [name, value] of Object.entries(fuzzCase.headers)) lines.push(`${name}: ${clip(JSON.stringify(value), 200)}`)
  if (fuzzCase.body.contentType !== undefined) lines.push(`content-type: ${fuzzCase.body.contentType}`)
  const size = fuzzCase.body.payload === undefined ? 0 : Buffer.byteLength(fuzzCase.body.payload)
  lines.push(`body (${size} bytes): ${clip(fuzzCase.body.recipe, 1500)}`)
  if (fuzzCase.notes.length > 0) lines.push(`mutations: ${fuzzCase.notes.join(' | ')}`)
  return lines.join('\n  ')
}

/** Gives the case a toString fast-check uses when it prints the counterexample. */
export const printable = (fuzzCase: FuzzCase): FuzzCase =>
  Object.defineProperty(fuzzCase, fc.toStringMethod, { value: () => `\n  ${describeCase(fuzzCase)}\n`, enumerable: false })

export interface CaseSources {
  known: KnownValues
  /** A real PNG for multipart cases that get past the form parsing. */
  png: Buffer
}

/** Every request the fuzzer may send to one operation. */
export function caseArbitrary(operation: Operation, sources: CaseSources): fc.Arbitrary<FuzzCase> {
  const path = fc.record(Object.fromEntries(operation.pathParams.map((parameter) => [parameter.name, pathValue(parameter, sources.known)])))
  const query = queryString(operation.queryParams, sources.known)
  const bodies =
    operation.bodyKind === 'json'
      ? jsonBodies(arbitraryFromSchema(operation.bodySchema ?? {}, sources.known))
      : operation.bodyKind === 'multipart'
        ? fc.oneof({ weight: 5, arbitrary: multipartBodies(sources.png) }, { weight: 1, arbitrary: wrongBodiesForMultipart })
        : operation.method === 'GET'
          ? fc.constant({ body: { recipe: '(no body)' }, notes: [] as string[] })
          : bodiesForNoBody
  return fc
    .tuple(path, query, bodies, headersFor(operation))
    .map(([pathValues, { query: queryText, notes: queryNotes }, { body, notes }, headers]) =>
      printable(makeCase(operation, pathValues, queryText, body, [...queryNotes, ...notes], headers)),
    )
}
