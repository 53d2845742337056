/**
 * Errors services throw and clients switch on. Each module keeps its codes in its
 * `<name>.errors.ts` (defined with `defineErrors`); `http/error-handler.ts` is the only place that
 * turns them into response bodies, and the OpenAPI document lists every code with its meaning.
 * Codes are part of the API: once shipped they never change.
 */
export interface FieldError {
  field: string
  message: string
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details: FieldError[] = [],
  ) {
    super(message)
    this.name = 'AppError'
  }
}

/** A stable code, the status it is answered with, and what it means (for the API reference). */
export interface ErrorCode<Code extends string = string, Status extends number = number> {
  code: Code
  status: Status
  description: string
}

/** A module's error catalogue: `{ CODE: { status, description } }` -> `{ CODE: ErrorCode }`. */
export function defineErrors<const T extends Record<string, { status: number; description: string }>>(definitions: T): { [K in keyof T & string]: ErrorCode<K, T[K]['status']> } {
  return Object.fromEntries(Object.entries(definitions).map(([code, definition]) => [code, { code, ...definition }])) as { [K in keyof T & string]: ErrorCode<K, T[K]['status']> }
}

/** An error of a catalogue, with a message for this occurrence. */
export const fail = (error: ErrorCode, message: string, details: FieldError[] = []): AppError => new AppError(error.status, error.code, message, details)

/** Codes every module may answer with (docs/api-conventions.md). */
export const commonErrors = defineErrors({
  VALIDATION_ERROR: { status: 400, description: 'A body, query or file breaks a rule; `details` names each field (nested paths as `packages.0.price`).' },
  UNAUTHENTICATED: { status: 401, description: 'No token, a bad or expired one, wrong credentials or an inactive account.' },
  FORBIDDEN: { status: 403, description: 'Authenticated, but without the permission this needs.' },
  NOT_FOUND: { status: 404, description: 'No such resource, or one the caller may not see (existence never leaks).' },
  METHOD_NOT_ALLOWED: { status: 405, description: 'The path exists but not with this method; `Allow` lists the methods it has.' },
  PAYLOAD_TOO_LARGE: { status: 413, description: 'The body is larger than this endpoint accepts.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'The content type is not accepted here.' },
  RANGE_NOT_SATISFIABLE: { status: 416, description: 'The requested byte range is outside the file.' },
  RATE_LIMITED: { status: 429, description: 'Over a rate limit; `Retry-After` says when to try again.' },
  INTERNAL_ERROR: { status: 500, description: 'A bug on our side; the message reveals nothing, the request id identifies it.' },
  NOT_READY: { status: 503, description: 'The database is not reachable (readiness probe).' },
})

export const validationError = (details: FieldError[], message = 'The request is invalid'): AppError => fail(commonErrors.VALIDATION_ERROR, message, details)

export const fieldError = (field: string, message: string): AppError => validationError([{ field, message }])

export const unauthenticated = (message = 'Authentication required'): AppError => fail(commonErrors.UNAUTHENTICATED, message)

export const forbidden = (message = 'You do not have permission to do this'): AppError => fail(commonErrors.FORBIDDEN, message)

export const notFound = (what = 'Resource'): AppError => fail(commonErrors.NOT_FOUND, `${what} not found`)
