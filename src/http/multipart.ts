import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type {} from '@fastify/multipart'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { stagingName } from '../platform/staging/staging.ts'
import { AppError, fieldError } from '../lib/errors.ts'
import type { StagedFile } from '../platform/files.ts'

export interface MultipartOptions {
  /**
   * The form field that carries the file(s): `file` or `files`. A list names several file
   * fields of one file each (`documentFront`, `selfie`), all optional here: the caller decides
   * which are required, and errors name the field of the part that broke a limit.
   */
  field: string | readonly string[]
  maxFiles: number
  maxBytes: number
  tmpDir: string
}

export interface ReceivedForm {
  /** In the order received; `field` is the form field each came in. */
  files: (StagedFile & { field: string })[]
  fields: Record<string, string>
}

const isTooLarge = (error: unknown) => (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE'

/** Room for the form's text fields and part headers beside the files themselves. */
const FORM_OVERHEAD_BYTES = 64 * 1024

const acceptsMultipart = (request: FastifyRequest): boolean => {
  const consumes = (request.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes
  return consumes?.includes('multipart/form-data') ?? false
}

/**
 * A multipart body sent to a JSON route is not parsed at all: without this the handler would see
 * no body and, for an all-optional schema, change nothing while answering success.
 */
export function refuseMultipartOnJsonRoutes(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  if (request.isMultipart() && !acceptsMultipart(request)) {
    done(fieldError('body', 'must be a JSON object (Content-Type: application/json); multipart/form-data is accepted by upload routes only'))
    return
  }
  done()
}

/**
 * Streams each file part to a staging file, capped at `maxBytes` while it arrives, and hands the
 * form to `use`. Breaking a limit (size, count, wrong field, empty file) is a 400 on the file
 * field. Staged files are removed afterwards, whatever happened.
 */
export async function withForm<T>(request: FastifyRequest, options: MultipartOptions, use: (form: ReceivedForm) => Promise<T>): Promise<T> {
  const files: (StagedFile & { field: string })[] = []
  const fields: Record<string, string> = {}
  const named = typeof options.field === 'string' ? undefined : options.field
  // The field an error about the whole form names: the one file field, or the first of several.
  const formField = typeof options.field === 'string' ? options.field : (options.field[0] ?? 'file')
  const discard = async () => {
    await Promise.all(files.map((file) => rm(file.path, { force: true })))
  }
  const mb = Math.round(options.maxBytes / (1024 * 1024))
  // A declared length beyond what the form may hold is refused before a byte of it is read.
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > options.maxFiles * options.maxBytes + FORM_OVERHEAD_BYTES) {
    throw fieldError(formField, options.maxFiles === 1 ? `must be at most ${mb} MB` : `must be at most ${options.maxFiles} files of ${mb} MB`)
  }
  try {
    try {
      await mkdir(options.tmpDir, { recursive: true })
      const parts = request.parts({ limits: { fileSize: options.maxBytes, files: options.maxFiles + 1, fields: 20, fieldSize: 4096, parts: options.maxFiles + 21 } })
      for await (const part of parts) {
        if (part.type === 'field') {
          fields[part.fieldname] = String(part.value)
          continue
        }
        if (named ? !named.includes(part.fieldname) : part.fieldname !== options.field) {
          part.file.resume()
          if (named) throw fieldError(part.fieldname, `is not a file field of this form (expected ${named.join(', ')})`)
          throw fieldError(formField, `must be sent in the "${formField}" field (got "${part.fieldname}")`)
        }
        const field = part.fieldname
        if (named ? files.some((file) => file.field === field) : files.length >= options.maxFiles) {
          part.file.resume()
          throw fieldError(field, options.maxFiles === 1 || named ? 'must be exactly one file' : `must be at most ${options.maxFiles} files`)
        }
        const staged = { path: join(options.tmpDir, stagingName()), filename: part.filename, size: 0, field }
        files.push(staged)
        // Busboy would read (and discard) the rest of an oversized file to the end of its part:
        // stop at the limit instead, so a 200 MB body is refused after 10 MB, not after 200.
        part.file.once('limit', () => part.file.destroy(fieldError(field, `must be at most ${mb} MB`)))
        try {
          await pipeline(part.file, createWriteStream(staged.path))
        } catch (error) {
          if (isTooLarge(error)) throw fieldError(field, `must be at most ${mb} MB`)
          throw error
        }
        if (part.file.truncated) throw fieldError(field, `must be at most ${mb} MB`)
        staged.size = part.file.bytesRead
        if (staged.size === 0) throw fieldError(field, 'must not be empty')
      }
      if (files.length === 0 && !named) throw fieldError(formField, 'is required')
    } catch (error) {
      // Parser errors (a truncated or malformed body) are the client's; file-system errors are ours.
      if (error instanceof Error && !(error instanceof AppError) && !('syscall' in error) && !('statusCode' in error)) {
        throw fieldError(formField, 'could not be read: the multipart body is malformed')
      }
      throw error
    }
    return await use({ files, fields })
  } finally {
    await discard()
  }
}
