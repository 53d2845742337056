import { Type, type NumberOptions, type Static, type TSchema } from '@sinclair/typebox'
import type { ErrorCode } from '../lib/errors.ts'
import { CENT } from '../lib/money.ts'

/** A schema that also accepts null (OpenAPI 3.1 type arrays keep validation messages simple). */
export const Nullable = <T extends TSchema>(schema: T) =>
  typeof schema.type === 'string'
    ? Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
    : Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]))

export const FieldErrorSchema = Type.Object({
  field: Type.String({ description: 'The offending field; nested paths use dots, e.g. `packages.0.price`.' }),
  message: Type.String(),
})

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.String({ description: 'Stable, machine-readable code such as `VALIDATION_ERROR`.' }),
      message: Type.String({ description: 'Human-readable explanation.' }),
      details: Type.Array(FieldErrorSchema),
    }),
  },
  { $id: 'ErrorBody', description: 'Every failure has this shape.' },
)
export type ErrorBody = Static<typeof ErrorBody>

/** The success envelope `{ success: true, data }` around a payload schema. */
export const Envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data })

export const ok = <T>(data: T): { success: true; data: T } => ({ success: true, data })

/** One of a list of strings, documented as a string `enum` (generated clients get a union type). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string; examples?: T[number][] } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], errorMessage: `must be one of ${values.join(', ')}`, ...options })

/**
 * "Send one of these fields": one branch per field, each requiring it, for a body's `anyOf`
 * (either or both) or `oneOf` (exactly one). The validator turns a miss into one detail on the
 * first field (http/validation.ts).
 */
export const oneOfFields = (...names: string[]) => names.map((name) => ({ required: [name] }))

/**
 * An amount of money in a request: a whole number of cents (`multipleOf: 0.01`, checked within
 * floating-point error, as lib/money.ts counts cents). Answers carry no `multipleOf`: a validator
 * without that tolerance would call 0.57 a breach (0.57 / 0.01 is 56.99999999999999).
 */
export const Amount = (options: NumberOptions) => Type.Number({ multipleOf: CENT, ...options })

export const Id = Type.String({ format: 'uuid', description: 'UUIDv7 identifier.' })

export const IdParams = <K extends string>(name: K) => Type.Object({ [name]: Id } as Record<K, typeof Id>)

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' })

export const PageQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page, at most 100.' }),
})
export type PageQuery = Static<typeof PageQuery>

export const Pagination = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  pages: Type.Integer(),
  hasNext: Type.Boolean(),
  hasPrev: Type.Boolean(),
})

export const Page = <T extends TSchema>(item: T) => Type.Object({ items: Type.Array(item), pagination: Pagination })

/** A page of a list walked newest first by `cursor` (steady while new items arrive), which also answers page numbers. */
export const CursorPage = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    pagination: Type.Object({ ...Pagination.properties, nextCursor: Nullable(Type.String({ description: 'Send as `cursor` for the next (older) page; null on the last page.' })) }),
  })

export const Message = Type.Object({ message: Type.String() })

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation failed: `details` names each field (`VALIDATION_ERROR`).',
  401: 'No token, or an invalid or expired one (`UNAUTHENTICATED`).',
  403: 'Authenticated but not allowed (`FORBIDDEN`).',
  404: 'No such resource, or one the caller may not see (`NOT_FOUND`).',
  409: 'A conflicting request is in progress.',
  415: 'This content type is not accepted here (`UNSUPPORTED_MEDIA_TYPE`).',
  416: 'The requested byte range is outside the file (`RANGE_NOT_SATISFIABLE`).',
  422: 'The current state forbids this; `code` says why.',
  429: 'Rate limited (`RATE_LIMITED`); see `Retry-After`.',
}

type StatusOf<E> = E extends number ? E : E extends ErrorCode ? E['status'] : never

const ErrorResponse = (description: string) => Type.Object(ErrorBody.properties, { description })

/** The error answer of a status, described in general terms. */
export const errorResponse = (status: number) => ErrorResponse(ERROR_DESCRIPTIONS[status] ?? 'Error.')

/**
 * A route's response map: its success schemas plus the errors it can answer (429 always). An
 * error is a status, or a module's error code, whose status is then described by its codes.
 */
export function responses<S extends Record<number, TSchema>, const E extends readonly (number | ErrorCode)[] = []>(
  success: S,
  ...errors: E
): S & { [K in StatusOf<E[number]> | 429]: ReturnType<typeof ErrorResponse> } {
  const codesByStatus = new Map<number, ErrorCode[]>()
  for (const error of errors) {
    if (typeof error === 'number') codesByStatus.set(error, codesByStatus.get(error) ?? [])
    else codesByStatus.set(error.status, [...(codesByStatus.get(error.status) ?? []), error])
  }
  codesByStatus.set(429, codesByStatus.get(429) ?? [])
  const map: Record<number, TSchema> = { ...success }
  for (const [status, codes] of codesByStatus) {
    const description = codes.length > 0 ? codes.map((error) => `\`${error.code}\`: ${error.description}`).join(' ') : (ERROR_DESCRIPTIONS[status] ?? 'Error.')
    map[status] = ErrorResponse(description)
  }
  return map as S & { [K in StatusOf<E[number]> | 429]: ReturnType<typeof ErrorResponse> }
}
