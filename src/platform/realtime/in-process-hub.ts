import { LocalSockets } from './local-sockets.ts'
import type { Frame, RealtimeHub } from './realtime.ts'

/** One process: frames reach the sockets of this process only, which is all there is. */
export function createInProcessHub(options: { heartbeatMs: number }): RealtimeHub {
  const sockets = new LocalSockets()
  let timer: NodeJS.Timeout | undefined

  return {
    kind: 'memory',
    connect: (socket, owner) => sockets.add(socket, owner),
    async publish(userIds: readonly string[], frame: Frame) {
      sockets.deliver(userIds, JSON.stringify(frame))
    },
    async disconnectUser(userId, reason = 'Session ended') {
      sockets.close(userId, undefined, reason)
    },
    async disconnectSessions(userId, familyIds, reason = 'Session ended') {
      sockets.close(userId, familyIds, reason)
    },
    isOnline: async (userId) => sockets.has(userId),
    localSocketCount: () => sockets.size(),
    async heartbeat() {
      sockets.heartbeat()
    },
    async start() {
      timer ??= setInterval(() => sockets.heartbeat(), options.heartbeatMs).unref()
    },
    async close() {
      clearInterval(timer)
      sockets.closeAll(1001, 'Server shutting down')
    },
  }
}
