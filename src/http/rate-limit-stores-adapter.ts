import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'

/**
 * The one place that reaches into `@fastify/rate-limit`'s files for its two counting stores.
 * The plugin takes a store class or a `redis` client, not both: given Redis it counts only
 * there, and with Redis down it either fails every request or, with `skipOnError`, counts
 * nothing. The app's counter (`RateLimitCounter` in `rate-limit.ts`) counts in Redis and falls
 * back to the process while Redis is unreachable, so it needs both stores itself. The plugin
 * exports neither, and its package has no `exports` map, so the files are reachable by path.
 *
 * Written against the release below. `rate-limit-stores-adapter.test.ts` reads the installed
 * version and fails on any other, and checks the stores' contract (`incr(key, callback,
 * timeWindow, max)` answering `{ current, ttl }`, `child(routeOptions)`), so an upgrade is a
 * deliberate step: read the stores' diff, run that test, then move the version here.
 * @internal read by that test
 */
export const SUPPORTED_FASTIFY_RATE_LIMIT = '11.2'

/** A key's count in its window, and the milliseconds until the window ends (read it at once: the in-process store answers with the entry it keeps). */
export interface Counted {
  current: number
  ttl: number
}

export type CountCallback = (error: Error | null, result: Counted | null) => void

/** What the plugin asks of a store: count one more for `key` in a window of `timeWindow` ms. */
export interface CountingStore {
  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void
}

type LocalStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, cache: number) => CountingStore
type RedisStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, nameSpace: string) => CountingStore

const require = createRequire(import.meta.url)
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as LocalStoreClass
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as RedisStoreClass

/** The plugin's in-process store: fixed windows, for at most `keys` keys (the least recently used go first). */
export const localStore = (keys: number): CountingStore => new LocalStore(false, false, keys)

/** The plugin's Redis store (one Lua script per count), its keys under `namespace`. */
export const redisStore = (redis: Redis, namespace: string): CountingStore => new RedisStore(false, false, redis, namespace)
