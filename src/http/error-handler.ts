import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, type FieldError } from '../lib/errors.ts'
import type { ErrorBody } from './common.schemas.ts'
import { shapeAnswer, type EnvelopeShape } from './envelope.ts'
import { toFieldErrors } from './validation.ts'

const body = (code: string, message: string, details: FieldError[] = []): ErrorBody => ({
  success: false,
  error: { code, message, details },
})

/** Fastify's own 4xx errors, given codes a client can switch on. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; message: string; field?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'VALIDATION_ERROR', message: 'The body is not valid JSON', field: 'body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'VALIDATION_ERROR', message: 'The body is empty but the content type is JSON', field: 'body' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'VALIDATION_ERROR', message: 'Content-Length does not match the body', field: 'body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The body is larger than this endpoint accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'This content type is not accepted here' },
  FST_FILES_LIMIT: { status: 400, code: 'VALIDATION_ERROR', message: 'Too many files in the form', field: 'file' },
  FST_PARTS_LIMIT: { status: 400, code: 'VALIDATION_ERROR', message: 'Too many parts in the form', field: 'body' },
  FST_FIELDS_LIMIT: { status: 400, code: 'VALIDATION_ERROR', message: 'Too many fields in the form', field: 'body' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'This endpoint takes multipart/form-data' },
  FST_ERR_CTP_INVALID_TYPE: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The content type is missing or invalid' },
}

export function errorHandler(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AppError) {
    return reply.status(error.statusCode).send(body(error.code, error.message, error.details))
  }
  if (error.validation) {
    // A malformed path id names nothing that exists: the same answer as an unknown id.
    if (error.validationContext === 'params') return reply.status(404).send(body('NOT_FOUND', 'Resource not found'))
    const root = error.validationContext === 'body' ? 'body' : (error.validationContext ?? 'request')
    const { details, omitted } = toFieldErrors(error.validation as never, root)
    if (error.validationContext === 'headers') spellHeadersAsDocumented(request, details)
    const message = omitted > 0 ? `The request is invalid (${omitted} more problems are not listed)` : 'The request is invalid'
    return reply.status(400).send(body('VALIDATION_ERROR', message, details))
  }
  // Values PostgreSQL cannot store (NUL bytes, impossible dates) that slipped past validation.
  const sqlState = ((error as { cause?: { code?: string } }).cause ?? error).code
  if (sqlState && ['22021', '22P05', '22008', '22007'].includes(sqlState)) {
    return reply.status(400).send(body('VALIDATION_ERROR', 'A value in the request cannot be stored'))
  }
  const known = error.code ? FRAMEWORK_ERRORS[error.code] : undefined
  if (known) {
    return reply.status(known.status).send(body(known.code, known.message, known.field ? [{ field: known.field, message: known.message }] : []))
  }
  const status = error.statusCode ?? 500
  if (status === 429) return reply.status(429).send(body('RATE_LIMITED', 'Too many requests; retry after the time in Retry-After'))
  if (status >= 400 && status < 500) {
    request.log.info({ err: error }, 'client error')
    return reply.status(status).send(body('BAD_REQUEST', 'The request could not be processed'))
  }
  request.log.error({ err: error }, 'unhandled error')
  return reply.status(500).send(body('INTERNAL_ERROR', 'Something went wrong on our side; the request id identifies it'))
}

/** Fastify validates headers under lower-case names; details name them as the document does (`Idempotency-Key`). */
function spellHeadersAsDocumented(request: FastifyRequest, details: FieldError[]): void {
  const properties = (request.routeOptions.schema?.headers as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}
  const spellings = new Map(Object.keys(properties).map((name) => [name.toLowerCase(), name]))
  for (const detail of details) detail.field = spellings.get(detail.field.toLowerCase()) ?? detail.field
}

/**
 * Fastify's framework errors (a path that does not decode): answered as an unknown path is. No
 * hook runs for them, so the headers every answer carries and the shape the request prefers are
 * given here.
 */
export const badUrlHandler =
  (envelope: EnvelopeShape, fixedHeaders: Record<string, string>) =>
  (_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    // No hook runs for a URL that does not decode: the headers every answer carries are set here.
    void reply.headers(fixedHeaders).header('X-Request-Id', request.id).header('content-type', 'application/json; charset=utf-8').status(404)
    void reply.send(shapeAnswer(request, reply, JSON.stringify(body('NOT_FOUND', 'No such route')), envelope))
  }

/** Methods a path may have; OPTIONS is answered on every path (CORS preflight), so it proves nothing. */
const PROBED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * No route for this method and path. When the path has routes for other methods, the method is
 * what is wrong: 405 with `Allow` listing them (RFC 9110), in the usual envelope. The probe runs
 * only on this path, never on a routed request.
 */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?', 1)[0]!
  const allowed = PROBED_METHODS.filter((method) => method !== request.method && request.server.findRoute({ method, url: path }) !== null)
  if (allowed.length === 0) return reply.status(404).send(body('NOT_FOUND', 'No such route'))
  return reply
    .status(405)
    .header('Allow', [...allowed, 'OPTIONS'].join(', '))
    .send(body('METHOD_NOT_ALLOWED', `${request.method} is not allowed here; this path takes ${allowed.join(', ')}`))
}
