import type { Redis } from 'ioredis'
import type { SocketOwner } from './realtime.ts'
import { LocalSlots, type NamedSlot } from './socket-slots.ts'

/**
 * Every presence key carries the hash tag `{presence}`, so that Redis Cluster keeps them in one
 * slot: the scripts below touch a user's hash and the online list together, which Cluster refuses
 * across slots (decision 0231).
 */
const presenceKey = (userId: string) => `marketplace:{presence}:user:${userId}`

/**
 * Every user with an open socket, scored with the time (epoch ms) their presence lapses unless an
 * instance refreshes it: the list that presence filters read without scanning the presence hashes.
 */
const ONLINE = 'marketplace:{presence}:online'

/**
 * Takes a socket place in the user's presence hash (KEYS[1]) when fewer than the cap (ARGV[3])
 * of its fields still count at ARGV[1] (epoch ms); lapsed fields, left by a crashed instance, are
 * dropped on the way. The new field ARGV[4] counts until ARGV[2]; the hash lives ARGV[5] ms more,
 * and the user ARGV[6] is listed online (KEYS[2]) until then at least.
 * One script, so two instances admitting the same user's sockets at once cannot both pass the cap.
 */
const RESERVE = `
local fields = redis.call('HGETALL', KEYS[1])
local live = 0
for i = 1, #fields, 2 do
  if tonumber(fields[i + 1]) > tonumber(ARGV[1]) then live = live + 1 else redis.call('HDEL', KEYS[1], fields[i]) end
end
if live >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[4], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], 'GT', ARGV[2], ARGV[6])
return 1`

/**
 * Gives back the places ARGV[3..] of the user ARGV[2] (fields of KEYS[1]); when none of the
 * user's fields still counts at ARGV[1], the user leaves the online list (KEYS[2]) at once.
 */
const RELEASE = `
redis.call('HDEL', KEYS[1], unpack(ARGV, 3))
local untils = redis.call('HVALS', KEYS[1])
for i = 1, #untils do
  if tonumber(untils[i]) > tonumber(ARGV[1]) then return 0 end
end
redis.call('ZREM', KEYS[2], ARGV[2])
return 1`

/**
 * Presence in Redis: a hash per user, one field per open socket (`<instance>:<n>`, written when
 * its place is reserved before the upgrade), valued with the time it stops counting. This
 * instance refreshes its fields on every heartbeat and deletes each when its socket ends, so the
 * fields of a crashed instance lapse after three heartbeats. The same fields count the user's
 * sockets against the cap. A sorted set lists the users online (`ONLINE`), kept with the hashes,
 * for presence filters.
 */
export function createRedisPresence(options: {
  client: Redis
  instanceId: string
  heartbeatMs: number
  maxSocketsPerUser: number
  warn: (action: string) => (error: unknown) => void
}) {
  const { client, maxSocketsPerUser, warn } = options
  const presenceTtlMs = 3 * options.heartbeatMs

  const release = (userId: string, ids: string[]) => client.eval(RELEASE, 2, presenceKey(userId), ONLINE, Date.now(), userId, ...ids)
  const slots = new LocalSlots(`${options.instanceId}:`, (userId, id) => {
    if (client.status === 'ready') void release(userId, [id]).catch(warn('clear presence'))
  })

  return {
    /** Takes a place for the user's socket, counted on every instance; undefined at the cap. */
    async reserve(owner: SocketOwner): Promise<NamedSlot | undefined> {
      // Taken here first, so that upgrades racing on this instance are counted even without Redis.
      const slot = slots.take(owner)
      let admitted: boolean
      try {
        const now = Date.now()
        admitted = (await client.eval(RESERVE, 2, presenceKey(owner.userId), ONLINE, now, now + presenceTtlMs, maxSocketsPerUser, slot.id, presenceTtlMs, owner.userId)) === 1
      } catch (error) {
        warn('count sockets')(error)
        // While Redis is unreachable the cap holds on this instance alone.
        admitted = slots.count(owner.userId) <= maxSocketsPerUser
      }
      if (admitted) return slot
      slot.release()
      return undefined
    },

    /** Refreshes the fields of every place this instance holds (a field missed while Redis was away is written again). */
    markPresent(): Promise<void> {
      const held = slots.entries()
      if (held.length === 0 || client.status !== 'ready') return Promise.resolve()
      const now = Date.now()
      const until = String(now + presenceTtlMs)
      // Users listed by a crashed instance lapse here, as its presence fields do.
      const pipeline = client.pipeline().zremrangebyscore(ONLINE, '-inf', now)
      for (const [userId, ids] of held) {
        pipeline
          .hset(presenceKey(userId), Object.fromEntries(ids.map((id) => [id, until])))
          .pexpire(presenceKey(userId), presenceTtlMs)
          .zadd(ONLINE, 'GT', until, userId)
      }
      return pipeline.exec().then(() => undefined, warn('record presence'))
    },

    /** Whether any instance holds a place of the user that still counts; Redis unreachable reads as absent. */
    async isOnline(userId: string): Promise<boolean> {
      try {
        const until = await client.hvals(presenceKey(userId))
        const now = Date.now()
        return until.some((value) => Number(value) > now)
      } catch (error) {
        warn('read presence')(error)
        return false
      }
    },

    /** Users listed online, at most `limit`; none while Redis is unreachable. */
    async onlineUsers(limit: number): Promise<string[]> {
      try {
        return await client.zrangebyscore(ONLINE, `(${Date.now()}`, '+inf', 'LIMIT', 0, limit)
      } catch (error) {
        warn('read presence')(error)
        return []
      }
    },

    /** The places this instance holds, as [user, the names of their places]. */
    held: () => slots.entries(),

    /** Forgets these places of this instance's (on shutdown, all of them at once). */
    async forget(held: [string, string[]][]): Promise<void> {
      if (held.length > 0 && client.status === 'ready') {
        await Promise.all(held.map(([userId, ids]) => release(userId, ids))).catch(warn('clear presence'))
      }
    },
  }
}
