import { Type, type Static, type TObject } from '@sinclair/typebox'
import type { Tx } from '../../db/client.ts'
import { defineJob } from './jobs.ts'
import type { Outbox } from './outbox.ts'

/**
 * A domain event (DESIGN 6 "Events and webhooks"): its name, what it means, and the schema of its
 * `data` (the ids involved). Modules declare the events they emit in their module file; the
 * catalogue of all of them is what webhooks deliver and the API reference publishes.
 */
export interface EventType<S extends TObject = TObject> {
  readonly name: string
  readonly description: string
  readonly data: S
}

export const defineEvent = <S extends TObject>(name: string, description: string, data: S): EventType<S> => ({ name, description, data })

/** The outbox job that carries every event: `{ event, timestamp, data }`, the webhook body. */
export const EVENT_JOB = defineJob(
  'event',
  Type.Object({ event: Type.String(), timestamp: Type.String(), data: Type.Record(Type.String(), Type.Unknown()) }),
)

/**
 * Records an event in the caller's business transaction, so it exists if and only if the change
 * commits. `at` is the business time of the change.
 */
export function emitEvent<S extends TObject>(outbox: Outbox, tx: Tx, event: EventType<S>, data: Static<S>, at: Date): Promise<string> {
  return outbox.add(tx, EVENT_JOB, { event: event.name, timestamp: at.toISOString(), data })
}
