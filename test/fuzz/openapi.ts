import fc from 'fast-check'

/** The subset of JSON Schema (as @fastify/swagger prints TypeBox schemas) the fuzzer reads. */
export interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  not?: Schema
  discriminator?: { propertyName: string }
  multipleOf?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  examples?: unknown[]
  enum?: unknown[]
  const?: unknown
  format?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  minProperties?: number
  default?: unknown
}

export interface Parameter {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  required: boolean
  schema: Schema
}

export type BodyKind = 'json' | 'multipart' | 'none'

export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** The path as the document writes it, e.g. `/api/v1/services/{serviceId}` or `/api/v1/uploads/{path}`. */
  path: string
  pathParams: Parameter[]
  queryParams: Parameter[]
  headerParams: Parameter[]
  bodyKind: BodyKind
  bodySchema?: Schema
  /** The body examples the document shows (on the media type, or left on the schema). */
  bodyExamples: unknown[]
  secured: boolean
}

interface MediaType {
  schema?: Schema
  example?: unknown
  examples?: Record<string, { value: unknown }>
}

interface OpenApiOperation {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, MediaType> }
  security?: unknown[]
}

export interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, OpenApiOperation>>
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/** Every (method, path) operation in the document, in document order. */
export function listOperations(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      const parameters = operation.parameters ?? []
      const content = operation.requestBody?.content ?? {}
      const bodyKind: BodyKind = content['multipart/form-data'] ? 'multipart' : content['application/json'] ? 'json' : 'none'
      const media = content['multipart/form-data'] ?? content['application/json']
      operations.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        pathParams: parameters.filter((parameter) => parameter.in === 'path'),
        queryParams: parameters.filter((parameter) => parameter.in === 'query'),
        headerParams: parameters.filter((parameter) => parameter.in === 'header'),
        bodyKind,
        bodySchema: media?.schema,
        bodyExamples: media?.examples ? Object.values(media.examples).map((example) => example.value) : media?.example !== undefined ? [media.example] : (media?.schema?.examples ?? []),
        secured: (operation.security?.length ?? 0) > 0,
      })
    }
  }
  return operations
}

export const operationName = (operation: Pick<Operation, 'method' | 'path'>): string => `${operation.method} ${operation.path}`

/** Sample values for fields whose pattern fast-check cannot generate from (lookaheads). */
const PATTERN_SAMPLES: [RegExp, string[]][] = [
  [/\(\?=\.\*\[a-z\]\)/, ['Passw0rd!', 'Secret123', 'aB3aB3aB3', 'Zz9' + 'x'.repeat(40)]],
  [/<\[A-Za-z/, ['I will design a modern logo', 'Plain title 5 < 6', 'Résumé review & advice', 'Five!']],
]

const stringTypes = (schema: Schema): string[] => (schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type])

function stringArbitrary(schema: Schema, fieldName: string, known: KnownValues): fc.Arbitrary<unknown> {
  const real = known(fieldName, schema)
  const generated = generatedString(schema)
  if (real.length === 0) return generated
  // Real ids get past "not found" more often than random ones; other real values (an e-mail in
  // use) only take a share.
  return fc.oneof({ weight: schema.format === 'uuid' ? 3 : 1, arbitrary: fc.constantFrom(...real) }, { weight: 1, arbitrary: generated })
}

function generatedString(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0
  const maxLength = schema.maxLength ?? 200
  const fits = (value: string) => value.length >= minLength && value.length <= maxLength
  // Stretched or cut to the length bounds: filtering instead can spin forever on a narrow pattern.
  const toLength = (value: string) => (value.length < minLength ? value.padEnd(minLength, value || 'a') : value.slice(0, maxLength))
  switch (schema.format) {
    case 'uuid':
      return fc.uuid()
    case 'date':
      return fc
        .date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
        .map((date) => date.toISOString().slice(0, 10))
    case 'date-time':
      return fc.date({ noInvalidDate: true }).map((date) => date.toISOString())
    case 'uri':
      return fc.webUrl({ validSchemes: ['http', 'https'] }).map(toLength)
    case 'email':
      return fc.emailAddress().map(toLength)
    case 'binary':
      return fc.string({ maxLength: 20 })
  }
  if (schema.pattern) {
    const samples = PATTERN_SAMPLES.find(([marker]) => marker.test(schema.pattern!))?.[1]?.filter(fits)
    if (samples && samples.length > 0) return fc.constantFrom(...samples)
    if (/@/.test(schema.pattern)) return fc.emailAddress().map(toLength)
    try {
      return fc.stringMatching(new RegExp(schema.pattern), { size: 'xsmall' }).map(toLength)
    } catch {
      // An unsupported pattern: a plain string is valid-looking enough.
    }
  }
  const size = { minLength, maxLength: Math.min(maxLength, minLength + 40) }
  return fc.oneof({ weight: 3, arbitrary: fc.string({ ...size, unit: 'grapheme-ascii' }) }, { weight: 1, arbitrary: fc.string({ ...size, unit: 'grapheme' }) })
}

function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? schema.exclusiveMinimum ?? -1_000_000
  const max = schema.maximum ?? schema.exclusiveMaximum ?? 1_000_000
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
  // A whole number of steps times the step, as schema-driven generators do: 57 x 0.01 is
  // 0.5700000000000001, which the API must take as 0.57.
  if (schema.multipleOf !== undefined) return fc.integer({ min: Math.ceil(min / schema.multipleOf), max: Math.floor(max / schema.multipleOf) }).map((steps) => steps * schema.multipleOf!)
  // Prices and amounts: mostly whole cents, sometimes any double in range.
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: Math.ceil(min * 100), max: Math.floor(max * 100) }).map((cents) => cents / 100) },
    { weight: 1, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }) },
  )
}

/** Real values (ids of rows the test created) for a field or parameter name. */
export type KnownValues = (name: string, schema: Schema) => string[]

/**
 * An arbitrary of values that satisfy the schema, or nearly (patterns, uniqueness and cross-field
 * rules are approximated): the valid-looking start that mutations then break.
 */
/** Two schemas as one, for generating: properties and required fields joined, the rest of `extra` over `base`. */
function merged(base: Schema, extra: Schema): Schema {
  return {
    ...base,
    ...extra,
    ...((base.properties || extra.properties) && { properties: { ...base.properties, ...extra.properties } }),
    ...((base.required || extra.required) && { required: [...new Set([...(base.required ?? []), ...(extra.required ?? [])])] }),
  }
}

/**
 * The branches of an `anyOf`/`oneOf`, each merged with the schema around it. For a `oneOf` of
 * branches that only require a field ("send `a` or `b`"), a branch leaves out the fields the
 * others require, so that exactly one matches.
 */
function branchesOf(schema: Schema): Schema[] | undefined {
  const { anyOf, oneOf, ...rest } = schema
  const alternatives = oneOf ?? anyOf
  if (!alternatives) return undefined
  const base: Schema = anyOf && oneOf ? { ...rest, anyOf } : rest
  return alternatives.map((branch, index) => {
    const joined = merged(base, branch)
    if (!oneOf || branch.properties || !joined.properties) return joined
    const others = new Set(alternatives.flatMap((other, otherIndex) => (otherIndex === index ? [] : (other.required ?? []))))
    return { ...joined, properties: Object.fromEntries(Object.entries(joined.properties).filter(([name]) => !others.has(name) || branch.required?.includes(name))) }
  })
}

export function arbitraryFromSchema(schema: Schema, known: KnownValues, fieldName = '', depth = 0): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum) return fc.constantFrom(...schema.enum)
  // `allOf` parts add rules (a second pattern, a condition) that a caller's filter checks.
  if (schema.allOf) {
    const { allOf, ...rest } = schema
    return arbitraryFromSchema(allOf.filter((part) => part.type !== undefined || part.properties !== undefined).reduce(merged, rest), known, fieldName, depth)
  }
  const branches = branchesOf(schema)
  if (branches) return fc.oneof(...branches.map((branch) => arbitraryFromSchema(branch, known, fieldName, depth)))
  const types = stringTypes(schema)
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryFromSchema({ ...schema, type }, known, fieldName, depth)))
  switch (types[0]) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return numberArbitrary(schema, true)
    case 'number':
      return numberArbitrary(schema, false)
    case 'string':
      return stringArbitrary(schema, fieldName, known)
    case 'array': {
      const item = arbitraryFromSchema(schema.items ?? {}, known, fieldName, depth + 1)
      const minLength = schema.minItems ?? 0
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 3, 3))
      return schema.uniqueItems
        ? fc.uniqueArray(item, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
        : fc.array(item, { minLength, maxLength })
    }
    case 'object':
    case undefined: {
      const properties = schema.properties ?? {}
      if (depth > 4 || Object.keys(properties).length === 0) return fc.constant({})
      const record = Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, arbitraryFromSchema(property, known, name, depth + 1)]),
      )
      const requiredKeys = (schema.required ?? []).filter((name) => name in properties)
      const minProperties = schema.minProperties ?? 0
      return fc
        .record(record, { requiredKeys })
        .filter((value) => Object.keys(value).length >= minProperties)
    }
    default:
      return fc.constant(null)
  }
}
