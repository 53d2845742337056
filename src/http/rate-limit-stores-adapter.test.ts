import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { TEST_REDIS_URL } from '../../test/setup/test-app.ts'
import { localStore, redisStore, SUPPORTED_FASTIFY_RATE_LIMIT, type CountingStore, type Counted } from './rate-limit-stores-adapter.ts'

const WINDOW = 60_000

/** One count, copied: the in-process store answers with the entry it keeps, which the next count changes. */
const count = (store: CountingStore, key: string, max = 2) =>
  new Promise<Counted>((resolve, reject) =>
    store.incr(key, (error, result) => (error || !result ? reject(error ?? new Error('no result')) : resolve({ current: result.current, ttl: result.ttl })), WINDOW, max),
  )

/** What every store of the plugin answers: counts one by one per key, the time left in the window, and a store per route. */
async function expectStoreContract(store: CountingStore) {
  const key = randomUUID()
  const first = await count(store, key)
  const second = await count(store, key)
  const third = await count(store, key)
  expect([first.current, second.current, third.current]).toEqual([1, 2, 3])
  for (const { ttl } of [first, second, third]) {
    expect(Number.isInteger(ttl)).toBe(true)
    expect(ttl).toBeGreaterThan(WINDOW - 10_000)
    expect(ttl).toBeLessThanOrEqual(WINDOW)
  }
  expect((await count(store, randomUUID())).current).toBe(1)
  // The plugin asks a store for a child when a route has limits of its own.
  const child = (store as CountingStore & { child?: (options: unknown) => CountingStore }).child?.({
    continueExceeding: false,
    exponentialBackoff: false,
    cache: 10,
    routeInfo: { method: 'GET', url: '/contract' },
  })
  expect(typeof child?.incr).toBe('function')
  expect((await count(child!, key)).current).toBeGreaterThanOrEqual(1)
}

describe('the rate-limit stores adapter', () => {
  it(`is used with the @fastify/rate-limit release it is written for (${SUPPORTED_FASTIFY_RATE_LIMIT}.x)`, () => {
    const installed = (createRequire(import.meta.url)('@fastify/rate-limit/package.json') as { version: string }).version
    const [major, minor] = installed.split('.')
    expect(
      `${major}.${minor}`,
      `@fastify/rate-limit ${installed} is installed, and src/http/rate-limit-stores-adapter.ts is written for ${SUPPORTED_FASTIFY_RATE_LIMIT}.x: ` +
        'read the diff of its store/LocalStore.js and store/RedisStore.js (constructor arguments, incr, child), run this file, then move SUPPORTED_FASTIFY_RATE_LIMIT',
    ).toBe(SUPPORTED_FASTIFY_RATE_LIMIT)
  })

  it('gives the plugin’s in-process store, which keeps the contract', async () => {
    await expectStoreContract(localStore(100))
  })

  describe.skipIf(!TEST_REDIS_URL)('with Redis', () => {
    const redis = TEST_REDIS_URL ? new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 }) : undefined
    afterAll(() => redis?.quit())

    it('gives the plugin’s Redis store, which keeps the contract, its keys under the namespace', async () => {
      const namespace = `adapter-test-${randomUUID()}:`
      const store = redisStore(redis!, namespace)
      await expectStoreContract(store)
      const keys = await redis!.keys(`${namespace}*`)
      expect(keys.length).toBeGreaterThanOrEqual(2)
      await redis!.del(...keys)
    })
  })
})
