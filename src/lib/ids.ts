import { uuidv7 } from 'uuidv7'

/** Time-ordered identifiers (UUIDv7): index-friendly and safe to expose. */
export const newId = (): string => uuidv7()

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (value: string): boolean => UUID_PATTERN.test(value)
