import { LocalSockets } from './local-sockets.ts'
import type { Frame, RealtimeHub } from './realtime.ts'
import { LocalSlots } from './socket-slots.ts'

/** One process: frames reach the sockets of this process only, which is all there is. */
export function createInProcessHub(options: { heartbeatMs: number; maxSocketsPerUser: number }): RealtimeHub {
  const sockets = new LocalSockets()
  const slots = new LocalSlots('')
  const listeners = new Set<(name: string) => void>()
  let timer: NodeJS.Timeout | undefined

  return {
    kind: 'memory',
    // Places are taken synchronously: upgrades racing each other are counted one by one.
    reserve: async (owner) => (slots.count(owner.userId) < options.maxSocketsPerUser ? slots.take(owner) : undefined),
    connect: (socket, slot) => sockets.add(socket, slot),
    async publish(userIds: readonly string[], frame: Frame) {
      sockets.deliver(userIds, JSON.stringify(frame))
    },
    async disconnectUser(userId, reason = 'Session ended') {
      sockets.close(userId, undefined, reason)
    },
    async disconnectSessions(userId, familyIds, reason = 'Session ended') {
      sockets.close(userId, familyIds, reason)
    },
    async signal(name) {
      for (const listener of listeners) listener(name)
    },
    onSignal: (listener) => void listeners.add(listener),
    isOnline: async (userId) => sockets.has(userId),
    onlineUsers: async (limit) => sockets.users(limit),
    localSocketCount: () => sockets.size(),
    async heartbeat() {
      await sockets.heartbeat()
    },
    async start() {
      timer ??= setInterval(() => void sockets.heartbeat(), options.heartbeatMs).unref()
    },
    async close() {
      clearInterval(timer)
      sockets.closeAll(1001, 'Server shutting down')
    },
  }
}
