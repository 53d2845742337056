import { fieldError } from '../lib/errors.ts'

const UNIQUE_VIOLATION = '23505'

/** The constraint a unique violation hit (Drizzle wraps the driver's error in `cause`), if it was one. */
export function uniqueViolation(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown }).cause ?? error
  const { code, constraint } = (cause ?? {}) as { code?: string; constraint?: string }
  return code === UNIQUE_VIOLATION ? (constraint ?? '') : undefined
}

/**
 * Runs `work`, answering a hit on the unique index `constraint` as a field error. Two concurrent
 * requests can both pass a check that a value is free; the index decides, and the loser gets the
 * same 400 the check would have given.
 */
export async function uniqueAsFieldError<T>(constraint: string, field: string, message: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (uniqueViolation(error) === constraint) throw fieldError(field, message)
    throw error
  }
}
