import { availableParallelism } from 'node:os'
import { hash, verify } from '@node-rs/argon2'
import pLimit from 'p-limit'

/** OWASP's argon2id baseline: 19 MiB, two passes, one lane. `algorithm: 2` is Argon2id (a const enum we cannot import). */
const OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

/** Half the cores by default, so a storm of logins leaves the event loop a core (see `PASSWORD_HASH_CONCURRENCY`). */
export const defaultHashConcurrency = (): number => Math.max(1, Math.floor(availableParallelism() / 2))

/**
 * Argon2 runs on libuv's worker threads, which share the cores with the event loop: without a
 * bound, a burst of logins slows every other request. Hashes beyond the bound wait their turn.
 * Process-wide, as the thread pool is.
 */
const hashing = pLimit(defaultHashConcurrency())

/** The number of argon2 computations allowed at once (the app sets it from its config); waiting ones start at once if it grows. */
export function limitPasswordHashing(concurrency: number): void {
  hashing.concurrency = concurrency
}

/**
 * Hashes running and hashes waiting.
 * @internal
 */
export const passwordHashingLoad = () => ({ running: hashing.activeCount, waiting: hashing.pendingCount })

export const hashPassword = (password: string): Promise<string> => hashing(() => hash(password, OPTIONS))

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await hashing(() => verify(passwordHash, password))
  } catch {
    return false
  }
}

let dummyHash: Promise<string> | undefined

/**
 * Compares against a throwaway hash so that an unknown e-mail costs the same time as a wrong
 * password, and response timing does not reveal which accounts exist.
 */
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hashPassword('timing-equaliser-not-a-real-password')
  await verifyPassword(await dummyHash, password)
}
