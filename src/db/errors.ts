const UNIQUE_VIOLATION = '23505'

/** The constraint a unique violation hit (Drizzle wraps the driver's error in `cause`), if it was one. */
export function uniqueViolation(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown }).cause ?? error
  const { code, constraint } = (cause ?? {}) as { code?: string; constraint?: string }
  return code === UNIQUE_VIOLATION ? (constraint ?? '') : undefined
}
