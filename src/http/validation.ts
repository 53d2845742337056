import { Ajv, type ErrorObject, type Options } from 'ajv'
import ajvErrors from 'ajv-errors'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import type { FieldError } from '../lib/errors.ts'
import { CENT_PRECISION } from '../lib/money.ts'

/**
 * `uuid` as PostgreSQL reads it: 8-4-4-4-12 hexadecimal digits, in any letter case. ajv-formats
 * also accepts a `urn:uuid:` prefix, which the database refuses to read: such an id would fail
 * in SQL instead of being answered as bad input.
 */
export const UUID_FORMAT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    // A `oneOf` with a `discriminator` (a payout's `method`) is checked against its one branch,
    // so the errors are that branch's, not every branch's.
    discriminator: true,
    // `multipleOf: 0.01` on amounts: 0.07 / 0.01 is 7.000000000000001 in binary floating point.
    // The money helpers count cents with the same tolerance (lib/money.ts).
    multipleOfPrecision: CENT_PRECISION,
    ...options,
  })
  addFormats.default(ajv)
  ajv.addFormat('uuid', UUID_FORMAT)
  ajvErrors.default(ajv, { singleError: true })
  return ajv
}

/**
 * JSON bodies are validated exactly as sent: a number in a string is a wrong type, not a number.
 * Query strings, path parameters and headers are text on the wire, so they are coerced.
 */
const bodyAjv = createAjv({ coerceTypes: false })
const textAjv = createAjv({ coerceTypes: 'array' })

/** Deeper JSON than this is refused before anything walks it (no legitimate body comes close). */
export const MAX_BODY_DEPTH = 32

/** At most this many details are listed in one answer; the message counts the rest. */
export const MAX_DETAILS = 20

type JsonSchema = Record<string, unknown>
const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value)
const mapSchemas = (schemas: unknown[]) => schemas.map(guardLimits)

/**
 * The schema as validated: the same rules, with the costly keywords gated behind the cheap size
 * limit next to them. Ajv lists every error (`allErrors`), so by itself it would validate each of
 * 64,000 items of a ten-item array, and run a pattern over a megabyte-long string that is
 * already too long. Here `items` and `uniqueItems` run only on an array within `maxItems`, and
 * `pattern` and `format` only on a string within `maxLength`: the size error is reported, every
 * other field is still checked, and no work is spent past a limit.
 */
export function guardLimits(schema: unknown): unknown {
  if (!isSchema(schema)) return schema
  const guarded: JsonSchema = { ...schema }
  if (isSchema(schema.properties)) {
    guarded.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, guardLimits(property)]))
  }
  if (schema.items !== undefined) guarded.items = Array.isArray(schema.items) ? mapSchemas(schema.items) : guardLimits(schema.items)
  if (isSchema(schema.additionalProperties)) guarded.additionalProperties = guardLimits(schema.additionalProperties)
  for (const combinator of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[combinator]
    if (Array.isArray(branches)) guarded[combinator] = mapSchemas(branches)
  }
  const gate = (limit: JsonSchema, keywords: string[]) => {
    const gated: JsonSchema = {}
    for (const keyword of keywords) {
      if (guarded[keyword] === undefined) continue
      gated[keyword] = guarded[keyword]
      delete guarded[keyword]
    }
    if (Object.keys(gated).length === 0) return
    guarded.allOf = [...((guarded.allOf as unknown[] | undefined) ?? []), { if: limit, then: gated }]
  }
  if (typeof schema.maxItems === 'number') gate({ maxItems: schema.maxItems }, ['items', 'uniqueItems', 'contains'])
  if (typeof schema.maxLength === 'number') {
    // A schema has one `pattern`; a second one (the NUL rule, http/route-schemas.ts) sits in an
    // `allOf` branch of its own, and waits behind the same limit.
    const branches = (guarded.allOf as unknown[] | undefined) ?? []
    const textOnly = (branch: unknown) => isSchema(branch) && Object.keys(branch).length > 0 && Object.keys(branch).every((keyword) => keyword === 'pattern' || keyword === 'format')
    const patterns = branches.filter(textOnly)
    if (patterns.length > 0) {
      const rest = branches.filter((branch) => !textOnly(branch))
      if (rest.length > 0) guarded.allOf = rest
      else delete guarded.allOf
      guarded.allOf = [...((guarded.allOf as unknown[] | undefined) ?? []), { if: { maxLength: schema.maxLength }, then: { allOf: patterns } }]
    }
    gate({ maxLength: schema.maxLength }, ['pattern', 'format'])
  }
  return guarded
}

/**
 * One pass over the data, without recursion (a 60 KB body can nest 10,000 levels and overflow the
 * stack): the first string holding a NUL character, which PostgreSQL cannot store in text, or
 * the first value nested deeper than MAX_BODY_DEPTH.
 */
function scan(data: unknown): ErrorObject | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: data, path: '', depth: 0 }]
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return problem(path, 'nul', 'must not contain NUL characters')
      continue
    }
    if (value === null || typeof value !== 'object') continue
    if (depth >= MAX_BODY_DEPTH) return problem('', 'depth', `is nested too deeply (at most ${MAX_BODY_DEPTH} levels)`)
    for (const [key, child] of Object.entries(value)) stack.push({ value: child, path: `${path}/${key}`, depth: depth + 1 })
  }
  return undefined
}

const problem = (instancePath: string, keyword: string, message: string, field?: string) => ({ instancePath, keyword, schemaPath: '#', params: field === undefined ? {} : { field }, message }) as ErrorObject

/** The schema at a JSON pointer of an Ajv `schemaPath` (`#/properties/a/oneOf`). */
function schemaAt(root: unknown, schemaPath: string): unknown {
  let node = root
  for (const part of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (!isSchema(node) && !Array.isArray(node)) return undefined
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  return node
}

/** The field names of `anyOf`/`oneOf` branches that only require fields ("send `a` or `b`"), else undefined. */
function requiredAlternatives(branches: unknown): string[] | undefined {
  if (!Array.isArray(branches)) return undefined
  const names = branches.map((branch) => (isSchema(branch) && Object.keys(branch).length === 1 && Array.isArray(branch.required) && branch.required.length === 1 ? String(branch.required[0]) : undefined))
  return names.every((name) => name !== undefined) ? names : undefined
}

const quoted = (names: string[]) => names.map((name) => `\`${name}\``).join(' or ')

/**
 * "One of these fields" rules are stated in the schema as `anyOf`/`oneOf` branches that each
 * require one field. Ajv reports them as a `required` error per branch plus "must match a schema
 * in anyOf"; a client is better served by one detail on the first field: "is required (send
 * `refreshToken` or `refresh`)", or, for a `oneOf` whose fields were both sent, one on the second.
 * A discriminated `oneOf` whose tag names no branch gets one detail on the tag, listing its values.
 */
function explainAlternatives(errors: ErrorObject[], schema: unknown): ErrorObject[] {
  const explained: ErrorObject[] = []
  for (const error of errors) {
    if (error.keyword === 'discriminator') {
      // The branch is chosen by this field (a payout's `method`): it is missing or names no branch.
      const tag = String(error.params.tag)
      const branches = schemaAt(schema, error.schemaPath.replace(/\/discriminator$/, '/oneOf'))
      const values = Array.isArray(branches) ? branches.map((branch) => schemaAt(branch, `#/properties/${tag}/const`)).filter((value) => value !== undefined).map(String) : []
      explained.push(problem(error.instancePath, 'alternatives', `must be one of ${values.join(', ')}`, tag))
      continue
    }
    const alternative = /^(.*\/(?:anyOf|oneOf))\/\d+\/required$/.exec(error.schemaPath)
    if (error.keyword === 'required' && alternative && requiredAlternatives(schemaAt(schema, alternative[1]!))) continue
    const names = error.keyword === 'anyOf' || error.keyword === 'oneOf' ? requiredAlternatives(schemaAt(schema, error.schemaPath)) : undefined
    if (!names) {
      explained.push(error)
      continue
    }
    const passing = (error.params as { passingSchemas?: number[] | null }).passingSchemas
    if (Array.isArray(passing) && passing.length > 1) {
      const sent = passing.map((index) => names[index]!)
      explained.push(problem(error.instancePath, 'alternatives', `must not be sent with ${quoted(sent.slice(0, -1))}: send one of them`, sent.at(-1)))
    } else {
      explained.push(problem(error.instancePath, 'alternatives', `is required (send ${quoted(names)})`, names[0]))
    }
  }
  return explained
}

/**
 * Bodies that Fastify must not validate before the handler runs: a multipart form is streamed and
 * checked part by part by the handler (http/multipart.ts), and its schema documents it.
 */
const checkedByHandler = new WeakSet<object>()

export function bodyCheckedByHandler(schema: object): void {
  checkedByHandler.add(schema)
}

/** Checks outside Fastify's validation (a form's text fields): the problems, field by field. */
export function compileBodyCheck(schema: object): (data: unknown) => FieldError[] {
  const validate = bodyAjv.compile(guardLimits(schema) as object)
  return (data) => {
    const found = scan(data)
    if (found) return toFieldErrors([found], 'body').details
    return validate(data) ? [] : toFieldErrors(validate.errors ?? [], 'body').details
  }
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  if (httpPart === 'body' && checkedByHandler.has(schema)) return () => true
  const guarded = guardLimits(schema) as object
  const validate = (httpPart === 'body' ? bodyAjv : textAjv).compile(guarded)
  const check = (data: unknown) => {
    // A request without a body is checked as an empty object, so it gets one error per required
    // field instead of "must be object", an all-optional body (logout) may be left out, and the
    // handler always receives an object.
    const value = httpPart === 'body' ? (data ?? {}) : data
    const found = scan(value)
    if (found) {
      check.errors = [found]
      return false
    }
    const valid = validate(value)
    check.errors = valid || !validate.errors ? validate.errors : explainAlternatives(validate.errors, guarded)
    return valid ? { value } : false
  }
  check.errors = validate.errors
  return check
}

const joinPath = (instancePath: string, property?: string): string => {
  const parts = instancePath.split('/').filter(Boolean).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (property !== undefined) parts.push(property)
  return parts.join('.')
}

/** Turns Ajv errors into field-keyed details, one per field and message, at most MAX_DETAILS. */
export function toFieldErrors(errors: ErrorObject[], root: string): { details: FieldError[]; omitted: number } {
  const details: FieldError[] = []
  const seen = new Set<string>()
  let omitted = 0
  for (const error of errors) {
    // "must match the then schema" only wraps the errors of a gated keyword, reported on their own;
    // ajv-errors adds an empty one for the keyword messages that did not apply.
    if (error.keyword === 'if' || (error.keyword === 'errorMessage' && !error.message)) continue
    let field: string
    let message = error.message ?? 'is invalid'
    if (error.keyword === 'required') {
      field = joinPath(error.instancePath, String(error.params.missingProperty))
      message = 'is required'
    } else if (error.keyword === 'additionalProperties') {
      field = joinPath(error.instancePath, String(error.params.additionalProperty))
      message = 'is not an accepted field'
    } else if (error.keyword === 'alternatives') {
      field = joinPath(error.instancePath, String(error.params.field))
    } else {
      field = joinPath(error.instancePath)
    }
    if (field === '') field = root
    const key = `${field}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    if (details.length < MAX_DETAILS) details.push({ field, message })
    else omitted++
  }
  return { details, omitted }
}
