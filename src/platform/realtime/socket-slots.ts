import type { SocketOwner, SocketSlot } from './realtime.ts'

/** A place with the name it is kept under (in Redis, the field of the user's presence hash). */
export type NamedSlot = SocketSlot & { readonly id: string }

/**
 * The socket places this instance holds, by user: each taken before an upgrade and given back
 * once, when its socket ends or the upgrade fails. The in-process hub counts these against the
 * cap; the Redis hub keeps each as a field of the user's presence hash, which every instance counts.
 */
export class LocalSlots {
  private readonly byUser = new Map<string, Set<string>>()
  private next = 0

  constructor(
    private readonly prefix: string,
    private readonly onRelease: (userId: string, id: string) => void = () => undefined,
  ) {}

  count(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0
  }

  take(owner: SocketOwner): NamedSlot {
    const id = `${this.prefix}${(this.next++).toString(36)}`
    let held = this.byUser.get(owner.userId)
    if (!held) this.byUser.set(owner.userId, (held = new Set()))
    held.add(id)
    let released = false
    return {
      id,
      owner,
      release: () => {
        if (released) return
        released = true
        const current = this.byUser.get(owner.userId)
        current?.delete(id)
        if (current?.size === 0) this.byUser.delete(owner.userId)
        this.onRelease(owner.userId, id)
      },
    }
  }

  /** Every place held, as [user, the names of their places]. */
  entries(): [string, string[]][] {
    return [...this.byUser].map(([userId, ids]) => [userId, [...ids]])
  }
}
