/**
 * The error catalogue shared by every module. Services throw these; only http/error-handler.ts
 * turns them into response bodies. Codes are part of the API: once shipped they never change.
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

export const validationError = (details: FieldError[], message = 'The request is invalid'): AppError =>
  new AppError(400, 'VALIDATION_ERROR', message, details)

export const fieldError = (field: string, message: string): AppError => validationError([{ field, message }])

export const unauthenticated = (message = 'Authentication required'): AppError => new AppError(401, 'UNAUTHENTICATED', message)

export const forbidden = (message = 'You do not have permission to do this'): AppError => new AppError(403, 'FORBIDDEN', message)

export const notFound = (what = 'Resource'): AppError => new AppError(404, 'NOT_FOUND', `${what} not found`)

/** A well-formed request that the current state forbids (422 with a specific code). */
export const unprocessable = (code: string, message: string): AppError => new AppError(422, code, message)
