import type { Tx } from '../../db/client.ts'
import type { Outbox } from './outbox.ts'

/** The outbox topic of domain events (DESIGN 6 "Events and webhooks"). */
export const EVENT_TOPIC = 'event'

/** Spec events; more may be added. */
export type EventName = 'service.approved' | 'order.created' | 'order.completed' | 'payout.processed'

/**
 * Records an event in the caller's business transaction, so it exists if and only if the change
 * commits. `data` holds the ids involved; `at` is the business time of the change.
 */
export function emitEvent(outbox: Outbox, tx: Tx, name: EventName, data: Record<string, string>, at: Date): Promise<string> {
  return outbox.enqueue(tx, { topic: EVENT_TOPIC, payload: { event: name, timestamp: at.toISOString(), data } })
}
