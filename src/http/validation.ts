import { Ajv, type ErrorObject, type Options } from 'ajv'
import ajvErrors from 'ajv-errors'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import type { FieldError } from './errors.ts'

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, ...options })
  addFormats.default(ajv)
  ajvErrors.default(ajv, { singleError: true })
  return ajv
}

/**
 * JSON bodies are validated exactly as sent: a number in a string is a wrong type, not a number.
 * Query strings, path parameters and headers are text on the wire, so they are coerced.
 */
const bodyAjv = createAjv({ coerceTypes: false })
const textAjv = createAjv({ coerceTypes: 'array' })

/** The path of the first string holding a NUL character, which PostgreSQL cannot store in text. */
function findNul(data: unknown, path = ''): string | undefined {
  if (typeof data === 'string') return data.includes('\u0000') ? path : undefined
  if (data === null || typeof data !== 'object') return undefined
  for (const [key, value] of Object.entries(data)) {
    const found = findNul(value, `${path}/${key}`)
    if (found !== undefined) return found
  }
  return undefined
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const validate = (httpPart === 'body' ? bodyAjv : textAjv).compile(schema)
  const check = (data: unknown) => {
    const nul = findNul(data)
    if (nul !== undefined) {
      check.errors = [{ instancePath: nul, keyword: 'nul', schemaPath: '#', params: {}, message: 'must not contain NUL characters' }] as ErrorObject[]
      return false
    }
    // A request without a body is checked as an empty object, so it gets one error per required
    // field instead of "must be object", and an all-optional body (logout) may be left out.
    const valid = validate(httpPart === 'body' ? (data ?? {}) : data)
    check.errors = validate.errors
    return valid
  }
  check.errors = validate.errors
  return check
}

const joinPath = (instancePath: string, property?: string): string => {
  const parts = instancePath.split('/').filter(Boolean).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (property !== undefined) parts.push(property)
  return parts.join('.')
}

/** Turns Ajv errors into field-keyed details, one per field and message. */
export function toFieldErrors(errors: ErrorObject[], root: string): FieldError[] {
  const details: FieldError[] = []
  const seen = new Set<string>()
  for (const error of errors) {
    let field: string
    let message = error.message ?? 'is invalid'
    if (error.keyword === 'required') {
      field = joinPath(error.instancePath, String(error.params.missingProperty))
      message = 'is required'
    } else if (error.keyword === 'additionalProperties') {
      field = joinPath(error.instancePath, String(error.params.additionalProperty))
      message = 'is not an accepted field'
    } else {
      field = joinPath(error.instancePath)
    }
    if (field === '') field = root
    const key = `${field}\u0000${message}`
    if (seen.has(key)) continue
    seen.add(key)
    details.push({ field, message })
  }
  return details
}
