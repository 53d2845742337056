import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import { sellersAmongUsers } from './seller-presence.repository.ts'

/** How long an instance reuses the list of sellers online (the `sellerOnline` filter's staleness). */
export const ONLINE_SELLERS_TTL_MS = 1000
/** At most this many users online are looked at (decision 0206): the filter's cost stays bounded. */
export const ONLINE_USERS_CAP = 20_000

/**
 * The sellers with an open chat socket now, for the `sellerOnline` filter: the users the realtime
 * hub lists online (in this process, or on every instance through Redis), narrowed to those with
 * an active service by one statement, and kept for a second, so that a burst of filtered lists
 * asks the hub and the database once, and each list carries only the sellers among them.
 */
export function createSellerPresence(deps: { db: Db; clock: Clock; realtime: Pick<RealtimeHub, 'onlineUsers'> }) {
  const { db, clock, realtime } = deps
  let kept: { at: number; sellers: Promise<string[]> } | undefined

  return {
    onlineSellers(): Promise<string[]> {
      const now = clock.now().getTime()
      if (kept && now - kept.at < ONLINE_SELLERS_TTL_MS && now >= kept.at) return kept.sellers
      const sellers = realtime.onlineUsers(ONLINE_USERS_CAP).then((users) => sellersAmongUsers(db, users))
      kept = { at: now, sellers }
      // A failed read is not kept: the next list asks again.
      sellers.catch(() => {
        if (kept?.sellers === sellers) kept = undefined
      })
      return sellers
    },
  }
}

export type SellerPresence = ReturnType<typeof createSellerPresence>
