import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { Redis } from 'ioredis'
import { LocalSockets } from './local-sockets.ts'
import type { Frame, RealtimeHub } from './realtime.ts'
import { createRedisPresence } from './redis-presence.ts'

const CHANNEL = 'marketplace:realtime'

const untilReady = (client: Redis): Promise<void> => (client.status === 'ready' ? Promise.resolve() : new Promise((resolve) => client.once('ready', () => resolve())))

/** What instances tell each other on the channel. */
type Broadcast = { kind: 'frame'; userIds: string[]; text: string } | { kind: 'close'; userId: string; familyIds?: string[]; reason: string } | { kind: 'signal'; name: string }

/**
 * Several instances behind a load balancer (decision 0053). Every frame, close order and signal is
 * published on one Redis channel that every instance subscribes to; each instance acts on the
 * sockets it holds, the publisher included (it hears its own message). Presence, and the count
 * of a user's sockets against the cap, are kept in Redis too (`createRedisPresence`).
 */
export function createRedisHub(options: { url: string; heartbeatMs: number; maxSocketsPerUser: number; logger: FastifyBaseLogger }): RealtimeHub {
  const { logger, heartbeatMs } = options
  const connection = { maxRetriesPerRequest: 1, enableOfflineQueue: false }
  const publisher = new Redis(options.url, connection)
  const subscriber = new Redis(options.url, { maxRetriesPerRequest: null })
  // ioredis reconnects by itself (and resubscribes); failures are reported where they matter.
  publisher.on('error', () => undefined)
  subscriber.on('error', () => undefined)

  const warn = (action: string) => (error: unknown) => logger.warn({ err: error }, `realtime: could not ${action} through Redis`)

  const presence = createRedisPresence({ client: publisher, instanceId: randomUUID(), heartbeatMs, maxSocketsPerUser: options.maxSocketsPerUser, warn })
  const sockets = new LocalSockets()
  const listeners = new Set<(name: string) => void>()

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
    await presence.markPresent()
  }

  return {
    kind: 'redis',
    reserve: (owner) => presence.reserve(owner),
    connect: (socket, slot) => sockets.add(socket, slot),
    publish: (userIds, frame: Frame) => broadcast({ kind: 'frame', userIds: [...new Set(userIds)], text: JSON.stringify(frame) }),
    disconnectUser: (userId, reason = 'Session ended') => broadcast({ kind: 'close', userId, reason }),
    disconnectSessions: (userId, familyIds, reason = 'Session ended') => broadcast({ kind: 'close', userId, familyIds: [...familyIds], reason }),
    signal: (name) => broadcast({ kind: 'signal', name }),
    onSignal: (listener) => void listeners.add(listener),
    isOnline: async (userId) => sockets.has(userId) || presence.isOnline(userId),
    async onlineUsers(limit) {
      const local = sockets.users(limit)
      const listed = await presence.onlineUsers(limit)
      return [...new Set([...local, ...listed])].slice(0, limit)
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
      const held = presence.held()
      sockets.closeAll(1001, 'Server shutting down')
      await presence.forget(held)
      subscriber.disconnect()
      publisher.disconnect()
    },
  }
}
