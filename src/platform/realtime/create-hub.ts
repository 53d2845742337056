import type { FastifyBaseLogger } from 'fastify'
import { createInProcessHub } from './in-process-hub.ts'
import { createRedisHub } from './redis-hub.ts'
import type { RealtimeHub } from './realtime.ts'

/** Redis pub/sub when `REDIS_URL` is set (several instances), this process otherwise. */
export function createRealtimeHub(options: { redisUrl: string | undefined; heartbeatMs: number; maxSocketsPerUser: number; logger: FastifyBaseLogger }): RealtimeHub {
  const { redisUrl, ...rest } = options
  return redisUrl ? createRedisHub({ url: redisUrl, ...rest }) : createInProcessHub(rest)
}
