import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_REDIS_URL } from '../../../test/setup/test-app.ts'
import { createRedisHub } from './redis-hub.ts'
import type { RealtimeHub } from './realtime.ts'

const url = TEST_REDIS_URL

/** Redis Cluster hashes only a key's `{tag}`: keys one script touches must carry the same one. */
const hashTag = (key: string) => /\{([^}]+)\}/.exec(key)?.[1]

describe.skipIf(!url)('presence in Redis', () => {
  let hub: RealtimeHub
  let redis: Redis
  beforeAll(async () => {
    hub = createRedisHub({ url: url!, heartbeatMs: 60_000, maxSocketsPerUser: 2, logger: pino({ level: 'silent' }) })
    await hub.start()
    redis = new Redis(url!)
  })
  afterAll(async () => {
    await hub.close()
    redis.disconnect()
  })

  it('keeps a user\'s places and the online list under one hash tag, so that one Cluster slot holds both', async () => {
    const userId = randomUUID()
    const slot = await hub.reserve({ userId, familyId: randomUUID() })
    expect(slot).toBeDefined()
    const place = `marketplace:{presence}:user:${userId}`
    const online = 'marketplace:{presence}:online'
    expect(Object.keys(await redis.hgetall(place))).toHaveLength(1)
    expect(await redis.zscore(online, userId)).not.toBeNull()
    expect(hashTag(place)).toBe('presence')
    expect(hashTag(online)).toBe(hashTag(place))

    slot!.release()
    await expect.poll(() => redis.zscore(online, userId)).toBeNull()
    expect(await redis.exists(place)).toBe(0)
  })
})
