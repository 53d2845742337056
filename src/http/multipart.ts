import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type {} from '@fastify/multipart'
import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { stagingName } from '../platform/staging/staging.ts'
import { AppError, fieldError, validationError, type FieldError } from '../lib/errors.ts'
import type { StagedFile } from '../platform/files.ts'
import { bodyCheckedByHandler, compileBodyCheck } from './validation.ts'

/** A file field of a form. */
export interface FileField {
  description: string
  maxBytes: number
  /** How many files the field takes (default 1); a field of several is documented as an array. */
  maxCount?: number
  /**
   * The field may be left out (default: at least one file is required). A file that another
   * field makes necessary (the back of an identity card) is optional here; the service decides.
   */
  optional?: boolean
}

/** A file received in a form: staged on disk, with the field it came in. */
export type ReceivedFile = StagedFile & { field: string }

export interface ReceivedForm<Fields> {
  /** In the order received. */
  files: ReceivedFile[]
  /** The text fields, checked against the form's declaration. */
  fields: Fields
}

/**
 * A multipart form, declared once: the route documents it (`schema: { ...form.schema }`) and
 * reads it (`withForm(request, form, ...)`), so the OpenAPI document says exactly what the
 * handler accepts.
 */
export interface Form<F extends TProperties = TProperties> {
  /** For a route's `schema`: the content type and the documented body. */
  readonly schema: { consumes: string[]; body: TObject }
  /** The text fields. */
  readonly fields: TObject<F>
  readonly files: Readonly<Record<string, Required<FileField>>>
  /** What the whole body may weigh: every file at its limit, the text fields, the part headers. */
  readonly maxBodyBytes: number
  /** The parser's limits: one file or text field more than the form takes is still seen, so it is refused by name. */
  readonly limits: { fileSize: number; files: number; fields: number; fieldSize: number; parts: number; headerPairs: number }
  readonly checkFields: (fields: Record<string, string>) => FieldError[]
}

/** Room for the part headers beside the files and text values themselves. */
const FORM_OVERHEAD_BYTES = 64 * 1024
const MB = 1024 * 1024

const forms = new WeakMap<object, Form>()

/** The longest value a text field takes, in characters: every text field of a form is bounded. */
function maxCharacters(name: string, schema: TSchema): number {
  if (typeof schema.maxLength === 'number') return schema.maxLength
  if (Array.isArray(schema.enum)) return Math.max(...(schema.enum as string[]).map((value) => value.length))
  throw new Error(`The form field "${name}" needs a maxLength or an enum`)
}

const megabytes = (bytes: number) => `${Math.round(bytes / MB)} MB`

export function defineForm<F extends TProperties = Record<never, TSchema>>(declaration: { fields?: F; files: Record<string, FileField> }): Form<F> {
  const files = Object.fromEntries(Object.entries(declaration.files).map(([name, rule]) => [name, { maxCount: 1, optional: false, ...rule }])) as Record<string, Required<FileField>>
  const fields = Type.Object(declaration.fields ?? ({} as F), { additionalProperties: false })
  const fileCount = Object.values(files).reduce((sum, rule) => sum + rule.maxCount, 0)
  const fileBytes = Object.values(files).reduce((sum, rule) => sum + rule.maxCount * rule.maxBytes, 0)
  const fieldSizes = Object.entries(fields.properties).map(([name, schema]) => 4 * maxCharacters(name, schema))
  const fieldSize = Math.max(1024, ...fieldSizes)
  const documented = Object.fromEntries(
    Object.entries(files).map(([name, rule]) => {
      const binary = Type.Unsafe<unknown>({ type: 'string', format: 'binary', maxLength: rule.maxBytes, description: rule.maxCount === 1 ? rule.description : undefined })
      const schema = rule.maxCount === 1 ? binary : Type.Array(binary, { minItems: 1, maxItems: rule.maxCount, description: rule.description })
      return [name, rule.optional ? Type.Optional(schema) : schema]
    }),
  )
  const body: TObject = Type.Object({ ...(fields.properties as TProperties), ...documented }, { additionalProperties: false, description: 'multipart/form-data' })
  bodyCheckedByHandler(body)
  const textCount = fieldSizes.length
  const form: Form<F> = {
    schema: { consumes: ['multipart/form-data'], body },
    fields,
    files,
    maxBodyBytes: fileBytes + fieldSizes.reduce((sum, size) => sum + size, 0) + FORM_OVERHEAD_BYTES,
    limits: {
      fileSize: Math.max(...Object.values(files).map((rule) => rule.maxBytes)),
      files: fileCount + 1,
      fields: textCount + 1,
      fieldSize,
      parts: fileCount + textCount + 2,
      headerPairs: 100,
    },
    checkFields: compileBodyCheck(fields),
  }
  forms.set(body, form as unknown as Form)
  return form
}

/** The form the route takes, if it takes one. */
export function formOf(request: FastifyRequest): Form | undefined {
  const body = (request.routeOptions.schema as { body?: object } | undefined)?.body
  return body ? forms.get(body) : undefined
}

/** What a body sent to this route may weigh: its form's limit, or the route's JSON body limit. */
export const bodyLimitOf = (request: FastifyRequest): number => formOf(request)?.maxBodyBytes ?? request.routeOptions.bodyLimit ?? MB

const isTooLarge = (error: unknown) => (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE'

/**
 * A multipart body sent to a JSON route is not parsed at all: without this the handler would see
 * no body and, for an all-optional schema, change nothing while answering success.
 */
export function refuseMultipartOnJsonRoutes(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  if (request.isMultipart() && !formOf(request)) {
    done(fieldError('body', 'must be a JSON object (Content-Type: application/json); multipart/form-data is accepted by upload routes only'))
    return
  }
  done()
}

/**
 * Streams each file part to a staging file, capped at its field's limit while it arrives, checks
 * the text fields and the files against the form, and hands them to `use`. A part the form does
 * not have, a field sent twice, a file over its limit or an empty one is refused as soon as it
 * arrives (400 naming the field); what is missing or malformed once the body is read, all at
 * once. Staged files are removed afterwards, whatever happened.
 */
export async function withForm<F extends TProperties, T>(request: FastifyRequest, form: Form<F>, tmpDir: string, use: (received: ReceivedForm<Static<TObject<F>>>) => Promise<T>): Promise<T> {
  const files: ReceivedFile[] = []
  const fields: Record<string, string> = {}
  const fileFields = Object.keys(form.files)
  const textFields = form.fields.properties as Record<string, unknown>
  // The field an error about the whole form names: the one file field, or the first of several.
  const formField = fileFields[0] ?? 'body'
  const discard = async () => {
    await Promise.all(files.map((file) => rm(file.path, { force: true })))
  }
  // A declared length beyond what the form may hold is refused before a byte of it is read.
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > form.maxBodyBytes) {
    const only = fileFields.length === 1 && form.files[formField]!.maxCount === 1
    throw fieldError(formField, only ? `must be at most ${megabytes(form.limits.fileSize)}` : `must be at most ${form.limits.files - 1} files of ${megabytes(form.limits.fileSize)}`)
  }
  try {
    try {
      await mkdir(tmpDir, { recursive: true })
      for await (const part of request.parts({ limits: form.limits })) {
        const name = part.fieldname
        if (!name) throw fieldError(formField, 'could not be read: a part has no field name')
        if (part.type === 'field') {
          if (Object.hasOwn(form.files, name)) throw fieldError(name, 'must be a file (a part with a filename)')
          if (!Object.hasOwn(textFields, name)) throw fieldError(name, 'is not an accepted field')
          if (Object.hasOwn(fields, name)) throw fieldError(name, 'must be sent once')
          if (part.valueTruncated) throw fieldError(name, 'is too long')
          fields[name] = String(part.value)
          continue
        }
        const rule = Object.hasOwn(form.files, name) ? form.files[name] : undefined
        if (!rule) {
          part.file.resume()
          if (Object.hasOwn(textFields, name)) throw fieldError(name, 'must be a text value, not a file')
          if (fileFields.length === 1) throw fieldError(formField, `must be sent in the "${formField}" field (got "${name}")`)
          throw fieldError(name, `is not a file field of this form (expected ${fileFields.join(', ')})`)
        }
        if (files.filter((file) => file.field === name).length >= rule.maxCount) {
          part.file.resume()
          throw fieldError(name, rule.maxCount === 1 ? 'must be exactly one file' : `must be at most ${rule.maxCount} files`)
        }
        const tooLarge = () => fieldError(name, `must be at most ${megabytes(rule.maxBytes)}`)
        const staged = { path: join(tmpDir, stagingName()), filename: part.filename, size: 0, field: name }
        files.push(staged)
        // Busboy would read (and discard) the rest of an oversized file to the end of its part:
        // stop at the limit instead, so a 200 MB body is refused after 10 MB, not after 200.
        part.file.once('limit', () => part.file.destroy(tooLarge()))
        try {
          await pipeline(part.file, createWriteStream(staged.path))
        } catch (error) {
          if (isTooLarge(error)) throw tooLarge()
          throw error
        }
        staged.size = part.file.bytesRead
        // The parser's cap is the form's largest; a field with a smaller one is held to it here.
        if (part.file.truncated || staged.size > rule.maxBytes) throw tooLarge()
        if (staged.size === 0) throw fieldError(name, 'must not be empty')
      }
    } catch (error) {
      // Parser errors (a truncated or malformed body) are the client's; file-system errors are ours.
      if (error instanceof Error && !(error instanceof AppError) && !('syscall' in error) && !('statusCode' in error)) {
        throw fieldError(formField, 'could not be read: the multipart body is malformed')
      }
      throw error
    }
    const missing = Object.entries(form.files)
      .filter(([name, rule]) => !rule.optional && !files.some((file) => file.field === name))
      .map(([name]) => ({ field: name, message: 'is required' }))
    const problems = [...form.checkFields(fields), ...missing]
    if (problems.length > 0) throw validationError(problems)
    return await use({ files, fields: fields as Static<TObject<F>> })
  } finally {
    await discard()
  }
}
