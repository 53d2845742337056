import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyReply } from 'fastify'
import { JsonText } from '../db/json-sql.ts'
import { ok } from './common.schemas.ts'
import { UUID_FORMAT } from './validation.ts'

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The schema as an answer must match it exactly: every object that names its properties refuses
 * any other (`additionalProperties: false`), at every depth. The serializer drops unknown fields
 * silently; a text answer has no serializer, so an unknown field is an error. `allOf` branches are
 * left open (each sees only its own properties); `$id`s are dropped, so that a shared schema
 * inlined in several routes compiles in each.
 */
export function closedSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedSchema)
  if (!isObject(schema)) return schema
  const closed: Json = {}
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === '$id') continue
    if (keyword === 'properties' && isObject(value)) closed.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, closedSchema(property)]))
    else if (keyword === 'allOf') closed.allOf = value
    else if (keyword === 'examples' || keyword === 'default' || keyword === 'const' || keyword === 'enum') closed[keyword] = value
    else closed[keyword] = closedSchema(value)
  }
  if (isObject(schema.properties) && schema.additionalProperties === undefined && schema.patternProperties === undefined) closed.additionalProperties = false
  return closed
}

// Answers are checked as sent: no coercion, no defaults filled in, the first error is enough.
const ajv = new Ajv({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false })
addFormats.default(ajv)
ajv.addFormat('uuid', UUID_FORMAT)

/** One compiled validator per response schema, so per route and status; built at the route's first text answer. */
const validators = new WeakMap<object, ValidateFunction>()

function validatorOf(reply: FastifyReply): ValidateFunction {
  const responses = reply.routeOptions.schema?.response as Json | undefined
  const status = String(reply.statusCode)
  const schema = responses?.[status] ?? responses?.[`${status[0]}xx`] ?? responses?.default
  if (!isObject(schema)) throw new Error(`the route ${String(reply.routeOptions.method)} ${reply.routeOptions.url ?? ''} sends JSON text with no response schema for ${status}`)
  let validate = validators.get(schema)
  if (!validate) {
    validate = ajv.compile(closedSchema(schema) as Json)
    validators.set(schema, validate)
  }
  return validate
}

/**
 * Texts that passed a validator lately, per validator. A text's check is a function of the text
 * and the schema alone, so a text that passed once passes again: a service read a thousand times
 * between two changes, or the kept category tree, is parsed and checked at its first answer
 * through a route and not at the next ones (decisions 0227 and 0245). A text that fails is never
 * remembered, so it fails every time. Bounded by characters per validator; the oldest goes first.
 */
const PASSED_CHARS_PER_VALIDATOR = 1 << 20

class PassedTexts {
  // By length, then compared whole: a number is hashed at once, where V8 hashes a string by
  // walking all of it, which for a page of 15 KB costs more than the check it would spare.
  private readonly byLength = new Map<number, string[]>()
  private readonly order: string[] = []
  private chars = 0

  has(text: string): boolean {
    const candidates = this.byLength.get(text.length)
    if (candidates === undefined) return false
    for (const candidate of candidates) if (candidate === text) return true
    return false
  }

  add(text: string): void {
    if (text.length > PASSED_CHARS_PER_VALIDATOR) return
    while (this.chars + text.length > PASSED_CHARS_PER_VALIDATOR) this.forget(this.order.shift()!)
    this.order.push(text)
    this.chars += text.length
    const candidates = this.byLength.get(text.length)
    if (candidates) candidates.push(text)
    else this.byLength.set(text.length, [text])
  }

  private forget(text: string): void {
    this.chars -= text.length
    const candidates = this.byLength.get(text.length)!
    candidates.splice(candidates.indexOf(text), 1)
    if (candidates.length === 0) this.byLength.delete(text.length)
  }
}

const passed = new WeakMap<ValidateFunction, PassedTexts>()

function passedOf(validate: ValidateFunction): PassedTexts {
  let texts = passed.get(validate)
  if (!texts) passed.set(validate, (texts = new PassedTexts()))
  return texts
}

/**
 * The success envelope around `data`. Data built in Node goes through the route's response
 * serializer, as every answer does; `JsonText` (built by a statement from the same response
 * schema, db/json-sql.ts) is sent as the text it is, wrapped in the envelope, after it is parsed
 * and validated against the route's whole response schema, closed (`closedSchema`): types,
 * `enum`s, formats, required and nullable fields, and no property the schema does not name. An
 * answer that breaks it fails with a 500 instead of reaching a client, in production too
 * (decision 0130). The same text sent again through the same route is not checked again
 * (`PassedTexts`).
 */
export function answer<T>(reply: FastifyReply, data: T | JsonText<T>): { success: true; data: T } {
  if (!(data instanceof JsonText)) return ok(data)
  const body = `{"success":true,"data":${data.text}}`
  const validate = validatorOf(reply)
  const texts = passedOf(validate)
  if (!texts.has(data.text)) {
    if (!validate(JSON.parse(body))) {
      const [first] = validate.errors ?? []
      throw new Error(`the JSON built by the database breaks the route's response schema: ${first?.instancePath || '/'} ${first?.message ?? ''} ${first ? JSON.stringify(first.params) : ''}`)
    }
    texts.add(data.text)
  }
  reply.header('content-type', 'application/json; charset=utf-8')
  // A string with a JSON content type is sent as it is: Fastify's serializer only runs on objects.
  return body as unknown as { success: true; data: T }
}
