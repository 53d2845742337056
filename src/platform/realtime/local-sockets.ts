import { SESSION_ENDED, type HubSocket, type SocketOwner, type SocketSlot } from './realtime.ts'

const OPEN = 1
/** Sockets pinged in one turn of the event loop (a few milliseconds of work). */
const HEARTBEAT_SLICE = 256

interface Entry extends SocketOwner {
  socket: HubSocket
  slot: SocketSlot
  isAlive: boolean
}

/**
 * The sockets open on this instance, by user. Delivery, closing and heartbeats act on these;
 * the hubs decide which instance is told to act.
 */
export class LocalSockets {
  private readonly byUser = new Map<string, Set<Entry>>()
  private count = 0
  private round: Promise<void> | undefined

  /** Tracks an open socket in its place, which is given back when the socket leaves this list. */
  add(socket: HubSocket, slot: SocketSlot): void {
    const entry: Entry = { ...slot.owner, socket, slot, isAlive: true }
    let entries = this.byUser.get(entry.userId)
    if (!entries) {
      entries = new Set()
      this.byUser.set(entry.userId, entries)
    }
    entries.add(entry)
    this.count++
    socket.on('pong', () => {
      entry.isAlive = true
    })
    socket.on('close', () => this.remove(entry))
  }

  private remove(entry: Entry): void {
    const entries = this.byUser.get(entry.userId)
    if (!entries?.delete(entry)) return
    this.count--
    entry.slot.release()
    if (entries.size === 0) this.byUser.delete(entry.userId)
  }

  /** Sends an already serialised frame to every open socket of these users. */
  deliver(userIds: readonly string[], text: string): void {
    for (const userId of new Set(userIds)) {
      for (const { socket } of this.byUser.get(userId) ?? []) if (socket.readyState === OPEN) socket.send(text)
    }
  }

  /** Closes the user's sockets (only those of the given sessions when `familyIds` is set) with 4401. */
  close(userId: string, familyIds: readonly string[] | undefined, reason: string): void {
    for (const entry of [...(this.byUser.get(userId) ?? [])]) {
      if (familyIds && !familyIds.includes(entry.familyId)) continue
      entry.socket.close(SESSION_ENDED, reason)
      // A peer that never answers the close handshake must not keep the socket listed.
      this.remove(entry)
    }
  }

  has(userId: string): boolean {
    return this.byUser.has(userId)
  }

  /** Users with a socket here, at most `limit`. */
  users(limit: number): string[] {
    const found: string[] = []
    for (const userId of this.byUser.keys()) {
      if (found.length >= limit) break
      found.push(userId)
    }
    return found
  }

  size(): number {
    return this.count
  }

  /**
   * Drops sockets that missed the last ping (their peer is gone without a FIN), pings the rest.
   * A ping costs tens of microseconds, so a round over ten thousand sockets would hold the event
   * loop for a third of a second and every message in flight would wait it out: the round goes in
   * slices of `HEARTBEAT_SLICE` sockets, yielding to other work between them.
   */
  heartbeat(): Promise<void> {
    // Overlapping rounds would each take a socket's answer to the other's ping as missing.
    this.round ??= this.beatAll().finally(() => {
      this.round = undefined
    })
    return this.round
  }

  private async beatAll(): Promise<void> {
    const round: Entry[] = []
    for (const entries of this.byUser.values()) for (const entry of entries) round.push(entry)
    for (let start = 0; start < round.length; start += HEARTBEAT_SLICE) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve))
      for (const entry of round.slice(start, start + HEARTBEAT_SLICE)) this.beat(entry)
    }
  }

  private beat(entry: Entry): void {
    if (!entry.isAlive) {
      entry.socket.terminate()
      this.remove(entry)
      return
    }
    entry.isAlive = false
    if (entry.socket.readyState === OPEN) entry.socket.ping()
  }

  closeAll(code: number, reason: string): void {
    for (const entries of [...this.byUser.values()]) for (const entry of [...entries]) entry.socket.close(code, reason)
  }
}
