import type { FastifyBaseLogger } from 'fastify'
import { createInProcessHub } from './in-process-hub.ts'
import { createRedisHub } from './redis-hub.ts'
import type { RealtimeHub } from './realtime.ts'

/** Redis pub/sub when `REDIS_URL` is set (several instances), this process otherwise. */
export function createRealtimeHub(options: { redisUrl: string | undefined; heartbeatMs: number; logger: FastifyBaseLogger }): RealtimeHub {
  return options.redisUrl ? createRedisHub({ url: options.redisUrl, heartbeatMs: options.heartbeatMs, logger: options.logger }) : createInProcessHub({ heartbeatMs: options.heartbeatMs })
}
