import { createWriteStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type {} from '@fastify/multipart'
import type { FastifyRequest } from 'fastify'
import { stagingName } from '../platform/staging/staging.ts'
import { AppError, fieldError } from '../lib/errors.ts'
import type { StagedFile } from '../platform/files.ts'

export interface MultipartOptions {
  /** The form field that carries the file(s): `file` or `files`. */
  field: string
  maxFiles: number
  maxBytes: number
  tmpDir: string
}

export interface ReceivedForm {
  files: StagedFile[]
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
export async function refuseMultipartOnJsonRoutes(request: FastifyRequest): Promise<void> {
  if (request.isMultipart() && !acceptsMultipart(request)) {
    throw fieldError('body', 'must be a JSON object (Content-Type: application/json); multipart/form-data is accepted by upload routes only')
  }
}

/**
 * Streams each file part to a staging file, capped at `maxBytes` while it arrives, and hands the
 * form to `use`. Breaking a limit (size, count, wrong field, empty file) is a 400 on the file
 * field. Staged files are removed afterwards, whatever happened.
 */
export async function withForm<T>(request: FastifyRequest, options: MultipartOptions, use: (form: ReceivedForm) => Promise<T>): Promise<T> {
  const files: StagedFile[] = []
  const fields: Record<string, string> = {}
  const discard = async () => {
    await Promise.all(files.map((file) => rm(file.path, { force: true })))
  }
  const mb = Math.round(options.maxBytes / (1024 * 1024))
  // A declared length beyond what the form may hold is refused before a byte of it is read.
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > options.maxFiles * options.maxBytes + FORM_OVERHEAD_BYTES) {
    throw fieldError(options.field, options.maxFiles === 1 ? `must be at most ${mb} MB` : `must be at most ${options.maxFiles} files of ${mb} MB`)
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
        if (part.fieldname !== options.field) {
          part.file.resume()
          throw fieldError(options.field, `must be sent in the "${options.field}" field (got "${part.fieldname}")`)
        }
        if (files.length >= options.maxFiles) {
          part.file.resume()
          throw fieldError(options.field, options.maxFiles === 1 ? 'must be exactly one file' : `must be at most ${options.maxFiles} files`)
        }
        const staged: StagedFile = { path: join(options.tmpDir, stagingName()), filename: part.filename, size: 0 }
        files.push(staged)
        // Busboy would read (and discard) the rest of an oversized file to the end of its part:
        // stop at the limit instead, so a 200 MB body is refused after 10 MB, not after 200.
        part.file.once('limit', () => part.file.destroy(fieldError(options.field, `must be at most ${mb} MB`)))
        try {
          await pipeline(part.file, createWriteStream(staged.path))
        } catch (error) {
          if (isTooLarge(error)) throw fieldError(options.field, `must be at most ${mb} MB`)
          throw error
        }
        if (part.file.truncated) throw fieldError(options.field, `must be at most ${mb} MB`)
        staged.size = part.file.bytesRead
        if (staged.size === 0) throw fieldError(options.field, 'must not be empty')
      }
      if (files.length === 0) throw fieldError(options.field, 'is required')
    } catch (error) {
      // Parser errors (a truncated or malformed body) are the client's; file-system errors are ours.
      if (error instanceof Error && !(error instanceof AppError) && !('syscall' in error) && !('statusCode' in error)) {
        throw fieldError(options.field, 'could not be read: the multipart body is malformed')
      }
      throw error
    }
    return await use({ files, fields })
  } finally {
    await discard()
  }
}
