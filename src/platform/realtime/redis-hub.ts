import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { Redis } from 'ioredis'
import { LocalSockets } from './local-sockets.ts'
import type { Frame, RealtimeHub } from './realtime.ts'
import { LocalSlots } from './socket-slots.ts'

const CHANNEL = 'marketplace:realtime'

const untilReady = (client: Redis): Promise<void> => (client.status === 'ready' ? Promise.resolve() : new Promise((resolve) => client.once('ready', () => resolve())))
const presenceKey = (userId: string) => `marketplace:presence:${userId}`

/**
 * Every user with an open socket, scored with the time (epoch ms) their presence lapses unless an
 * instance refreshes it: the list that presence filters read without scanning the presence hashes.
 */
const ONLINE = 'marketplace:online'

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

/** What instances tell each other on the channel. */
type Broadcast = { kind: 'frame'; userIds: string[]; text: string } | { kind: 'close'; userId: string; familyIds?: string[]; reason: string } | { kind: 'signal'; name: string }

/**
 * Several instances behind a load balancer (decision 0053). Every frame, close order and signal is
 * published on one Redis channel that every instance subscribes to; each instance acts on the
 * sockets it holds, the publisher included (it hears its own message). Presence is a Redis hash
 * per user, one field per open socket (`<instance>:<n>`, written when its place is reserved
 * before the upgrade), valued with the time it stops counting: an instance refreshes its fields
 * on every heartbeat and deletes each when its socket ends, so the fields of a crashed instance
 * lapse after three heartbeats. The same fields count the user's sockets against the cap. A
 * sorted set lists the users online (`ONLINE`), kept with the hashes, for presence filters.
 */
export function createRedisHub(options: { url: string; heartbeatMs: number; maxSocketsPerUser: number; logger: FastifyBaseLogger }): RealtimeHub {
  const { logger, heartbeatMs, maxSocketsPerUser } = options
  const instanceId = randomUUID()
  const presenceTtlMs = 3 * heartbeatMs
  const connection = { maxRetriesPerRequest: 1, enableOfflineQueue: false }
  const publisher = new Redis(options.url, connection)
  const subscriber = new Redis(options.url, { maxRetriesPerRequest: null })
  // ioredis reconnects by itself (and resubscribes); failures are reported where they matter.
  publisher.on('error', () => undefined)
  subscriber.on('error', () => undefined)

  const warn = (action: string) => (error: unknown) => logger.warn({ err: error }, `realtime: could not ${action} through Redis`)

  const release = (userId: string, ids: string[]) => publisher.eval(RELEASE, 2, presenceKey(userId), ONLINE, Date.now(), userId, ...ids)
  const slots = new LocalSlots(`${instanceId}:`, (userId, id) => {
    if (publisher.status === 'ready') void release(userId, [id]).catch(warn('clear presence'))
  })
  const sockets = new LocalSockets()
  const listeners = new Set<(name: string) => void>()

  /** Refreshes the fields of every place this instance holds (a field missed while Redis was away is written again). */
  const markPresent = () => {
    const held = slots.entries()
    if (held.length === 0 || publisher.status !== 'ready') return Promise.resolve()
    const now = Date.now()
    const until = String(now + presenceTtlMs)
    // Users listed by a crashed instance lapse here, as its presence fields do.
    const pipeline = publisher.pipeline().zremrangebyscore(ONLINE, '-inf', now)
    for (const [userId, ids] of held) {
      pipeline
        .hset(presenceKey(userId), Object.fromEntries(ids.map((id) => [id, until])))
        .pexpire(presenceKey(userId), presenceTtlMs)
        .zadd(ONLINE, 'GT', until, userId)
    }
    return pipeline.exec().then(() => undefined, warn('record presence'))
  }

  const act = (message: Broadcast) => {
    if (message.kind === 'frame') sockets.deliver(message.userIds, message.text)
    else if (message.kind === 'signal') for (const listener of listeners) listener(message.name)
    else sockets.close(message.userId, message.familyIds, message.reason)
  }

  subscriber.on('message', (channel: string, raw: string) => {
    if (channel !== CHANNEL) return
    try {
      act(JSON.parse(raw) as Broadcast)
    } catch (error) {
      logger.warn({ err: error }, 'realtime: ignored a malformed broadcast')
    }
  })

  /** Publishes to every instance; while Redis is unreachable, this instance still acts on its own sockets. */
  async function broadcast(message: Broadcast): Promise<void> {
    try {
      await publisher.publish(CHANNEL, JSON.stringify(message))
    } catch (error) {
      warn('publish')(error)
      act(message)
    }
  }

  let timer: NodeJS.Timeout | undefined
  const heartbeat = async () => {
    await sockets.heartbeat()
    await markPresent()
  }

  return {
    kind: 'redis',
    async reserve(owner) {
      // Taken here first, so that upgrades racing on this instance are counted even without Redis.
      const slot = slots.take(owner)
      let admitted: boolean
      try {
        const now = Date.now()
        admitted = (await publisher.eval(RESERVE, 2, presenceKey(owner.userId), ONLINE, now, now + presenceTtlMs, maxSocketsPerUser, slot.id, presenceTtlMs, owner.userId)) === 1
      } catch (error) {
        warn('count sockets')(error)
        // While Redis is unreachable the cap holds on this instance alone.
        admitted = slots.count(owner.userId) <= maxSocketsPerUser
      }
      if (admitted) return slot
      slot.release()
      return undefined
    },
    connect: (socket, slot) => sockets.add(socket, slot),
    publish: (userIds, frame: Frame) => broadcast({ kind: 'frame', userIds: [...new Set(userIds)], text: JSON.stringify(frame) }),
    disconnectUser: (userId, reason = 'Session ended') => broadcast({ kind: 'close', userId, reason }),
    disconnectSessions: (userId, familyIds, reason = 'Session ended') => broadcast({ kind: 'close', userId, familyIds: [...familyIds], reason }),
    signal: (name) => broadcast({ kind: 'signal', name }),
    onSignal: (listener) => void listeners.add(listener),
    async isOnline(userId) {
      if (sockets.has(userId)) return true
      try {
        const until = await publisher.hvals(presenceKey(userId))
        const now = Date.now()
        return until.some((value) => Number(value) > now)
      } catch (error) {
        warn('read presence')(error)
        return false
      }
    },
    async onlineUsers(limit) {
      const local = sockets.users(limit)
      try {
        const listed = await publisher.zrangebyscore(ONLINE, `(${Date.now()}`, '+inf', 'LIMIT', 0, limit)
        return [...new Set([...local, ...listed])].slice(0, limit)
      } catch (error) {
        warn('read presence')(error)
        return local
      }
    },
    localSocketCount: () => sockets.size(),
    heartbeat,
    async start() {
      timer ??= setInterval(() => void heartbeat(), heartbeatMs).unref()
      // Serve at once even if Redis is down; frames then reach this instance's sockets only.
      let wait: NodeJS.Timeout | undefined
      // Subscribe only once the connection is ready: ioredis 5 writes a SUBSCRIBE issued between
      // connect and ready ahead of its ready check, whose INFO Redis then refuses in subscriber
      // mode; the connection is dropped and comes back without the subscription, so this instance
      // would never hear another's frames (redis/ioredis#2037).
      const subscribed = untilReady(subscriber).then(() => subscriber.subscribe(CHANNEL)).catch(warn('subscribe'))
      await Promise.race([
        Promise.all([subscribed, untilReady(publisher)]),
        new Promise((resolve) => {
          wait = setTimeout(resolve, 5000)
        }),
      ])
      clearTimeout(wait)
    },
    async close() {
      clearInterval(timer)
      const held = slots.entries()
      sockets.closeAll(1001, 'Server shutting down')
      if (held.length > 0 && publisher.status === 'ready') {
        await Promise.all(held.map(([userId, ids]) => release(userId, ids))).catch(warn('clear presence'))
      }
      subscriber.disconnect()
      publisher.disconnect()
    },
  }
}
