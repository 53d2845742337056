/**
 * What the benches share to set up users: the configuration they measure with, and accounts with a
 * live session each (an access token), created through the services as sign-up and login create them.
 */
import type { Config } from '../../src/config.ts'
import type { Container } from '../../src/container.ts'
import { hashPassword } from '../../src/lib/passwords.ts'

/** Every bench account's password. */
export const BENCH_PASSWORD = 'Bench-Passw0rd'

/**
 * The configuration of an in-process bench: measured as deployed (`isProduction` drops the
 * development guard around the database handle), rate limits out of the way, no in-process worker.
 */
export function inProcessBenchConfig(loaded: Config) {
  return { ...loaded, host: '127.0.0.1', port: 0, rateLimit: { ...loaded.rateLimit, general: 10_000_000 }, runWorker: false, logLevel: 'warn' as const, isProduction: true }
}

export interface BenchUser {
  id: string
  email: string
  token: string
}

/**
 * `count` active accounts named `<label>-<run>-<index>@bench.marketplace.test`, each with a session
 * and its access token; `concurrency` of them are created at a time (the order of the answer is the
 * order of the indexes).
 */
export async function createBenchUsers(container: Pick<Container, 'db' | 'users' | 'auth'>, options: { count: number; label: string; concurrency?: number }): Promise<BenchUser[]> {
  const run = Date.now().toString(36)
  const passwordHash = await hashPassword(BENCH_PASSWORD)
  const users: BenchUser[] = new Array(options.count)
  let next = 0
  await Promise.all(
    Array.from({ length: options.concurrency ?? 1 }, async () => {
      while (next < options.count) {
        const index = next++
        const email = `${options.label}-${run}-${index}@bench.marketplace.test`
        const account = await container.db.transaction((tx) => container.users.createAccount(tx, { email, fullName: `Bench ${options.label} ${index}`, passwordHash, isActive: true }))
        users[index] = { id: account.id, email, token: (await container.auth.issueSession(account)).accessToken }
      }
    }),
  )
  return users
}

/** The p-th percentile of ascending values (nearest rank). */
export const percentile = (sorted: readonly number[], p: number): number => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!)
