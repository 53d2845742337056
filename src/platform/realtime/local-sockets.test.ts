import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { LocalSockets } from './local-sockets.ts'
import type { HubSocket } from './realtime.ts'

/** A socket that counts its pings and answers them only while `answering`. */
class FakeSocket extends EventEmitter implements HubSocket {
  readyState = 1
  pings = 0
  terminated = false
  answering = true
  send(): void {}
  ping(): void {
    this.pings++
    if (this.answering) queueMicrotask(() => this.emit('pong'))
  }
  close(): void {
    this.readyState = 3
    this.emit('close')
  }
  terminate(): void {
    this.terminated = true
    this.close()
  }
}

function open(sockets: LocalSockets, count: number): FakeSocket[] {
  return Array.from({ length: count }, (_, n) => {
    const socket = new FakeSocket()
    sockets.add(socket, { owner: { userId: `user-${n % 100}`, familyId: `family-${n}` }, release: () => {} })
    return socket
  })
}

describe('LocalSockets.heartbeat', () => {
  it('pings a thousand sockets in slices, letting other work run between them, and keeps every socket that answers', async () => {
    const sockets = new LocalSockets()
    const all = open(sockets, 1000)
    let pingedWhenOtherWorkRan: number | undefined
    setImmediate(() => {
      pingedWhenOtherWorkRan = all.filter((socket) => socket.pings > 0).length
    })
    await sockets.heartbeat()
    expect(all.every((socket) => socket.pings === 1)).toBe(true)
    // Other work ran after the first slice and before the round ended.
    expect(pingedWhenOtherWorkRan).toBeGreaterThan(0)
    expect(pingedWhenOtherWorkRan).toBeLessThan(1000)
    await sockets.heartbeat()
    expect(sockets.size()).toBe(1000)
    expect(all.some((socket) => socket.terminated)).toBe(false)
  })

  it('drops, at the next round, the sockets that did not answer, and runs one round at a time', async () => {
    const sockets = new LocalSockets()
    const all = open(sockets, 600)
    for (const socket of all.slice(0, 300)) socket.answering = false
    const first = sockets.heartbeat()
    // A round asked for while one runs is that round: no socket is pinged twice before it can answer.
    expect(sockets.heartbeat()).toBe(first)
    await first
    expect(all.every((socket) => socket.pings === 1)).toBe(true)
    await sockets.heartbeat()
    expect(all.slice(0, 300).every((socket) => socket.terminated && socket.pings === 1)).toBe(true)
    expect(all.slice(300).every((socket) => !socket.terminated && socket.pings === 2)).toBe(true)
    expect(sockets.size()).toBe(300)
  })
})
