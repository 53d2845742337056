import fc from 'fast-check'
import { arbitraryFromSchema, type Operation } from './openapi.ts'
import { HugeArray, jsonBody, LongString, Nested, RawToken, type Body, type Json } from './payloads.ts'
import { makeCase, printable, WILDCARD, type CaseSources, type FuzzCase } from './requests.ts'

/**
 * Cases every operation gets whatever the random draw: the shapes most likely to break a server
 * (10,000 levels of nesting, `null` bodies, numbers past the column types, 20,000-item arrays,
 * 200 KB strings), each on an otherwise valid-looking request so it reaches the code behind
 * validation.
 */
export function classicCases(operation: Operation, sources: CaseSources, seed: number): FuzzCase[] {
  const pathValues = Object.fromEntries(
    operation.pathParams.map((parameter) => [parameter.name, sources.known(parameter.name, parameter.schema)[0] ?? (parameter.name === WILDCARD ? 'a/b.png' : '0190a000-0000-7000-8000-00000000abcd')]),
  )
  const cases: FuzzCase[] = []
  const add = (query: string, body: Body, notes: string[]) => cases.push(printable(makeCase(operation, pathValues, query, body, notes)))
  const noBody: Body = { recipe: '(no body)' }

  // Query strings: each parameter alone past the edges, the others left to their defaults.
  for (const parameter of operation.queryParams) {
    for (const value of ['21474836.48', '1e308', 'Infinity', '-1', '99999999999999999999999']) add(`${parameter.name}=${value}`, noBody, [`query ${parameter.name}=${value}`])
    add(`${parameter.name}=1&${parameter.name}=2`, noBody, [`query ${parameter.name} twice`])
  }

  if (operation.bodyKind === 'json') {
    const valid = fc.sample(arbitraryFromSchema(operation.bodySchema ?? {}, sources.known), { numRuns: 1, seed })[0] as Json
    add('', jsonBody(null), ['null body'])
    add('', jsonBody(new Nested(10_000, 'array')), ['deep nesting'])
    add('', jsonBody(new Nested(10_000, 'object')), ['deep nesting'])
    add('', { contentType: 'application/json', payload: '{"a":', recipe: '{"a":' }, ['not JSON'])
    const properties = operation.bodySchema?.properties ?? {}
    const object = typeof valid === 'object' && valid !== null && !Array.isArray(valid) ? (valid as Record<string, Json>) : {}
    for (const [name, property] of Object.entries(properties)) {
      const types = [property.type ?? []].flat()
      const replacements: [string, Json][] = []
      // Distinct items that break every item schema (pattern, enum, uuid): 20,000 of them cost
      // seconds of event loop to a validator that checks items past maxItems; 5,000 cost only 0.5 s.
      if (types.includes('array')) replacements.push(['huge array of distinct invalid items', new HugeArray('X_', 20_000, true)])
      if (types.includes('number') || types.includes('integer')) replacements.push(['edge number', new RawToken('21474836.48')], ['edge number', new RawToken('1e308')])
      if (types.includes('string')) replacements.push(['long string', new LongString('a', 200_000)])
      for (const [label, replacement] of replacements) add('', jsonBody({ ...object, [name]: replacement }), [`${name}: ${label}`])
    }
  }

  if (operation.bodyKind === 'multipart') {
    const boundary = '----fuzz-classic'
    const filePart = (name: string, content: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${content}\r\n`
    const multipart = (payload: string, recipe: string, contentType = `multipart/form-data; boundary=${boundary}`): Body => ({ contentType, payload, recipe })
    add('', multipart(`${filePart('file', '')}--${boundary}--\r\n`, 'one empty file "file"'), ['garbage multipart'])
    add('', multipart(`${filePart('files', '')}--${boundary}--\r\n`, 'one empty file "files"'), ['garbage multipart'])
    add('', multipart(filePart('file', 'abc').slice(0, 60), 'truncated inside the part headers'), ['garbage multipart'])
    add('', multipart(`${filePart('file', 'abc')}--${boundary}--\r\n`, 'boundary in header differs', 'multipart/form-data; boundary=other'), ['garbage multipart'])
    add('', multipart(`--${boundary}--\r\n`, 'no parts at all'), ['garbage multipart'])
  }
  return cases
}
