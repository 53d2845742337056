import { Type, type Static, type TObject } from '@sinclair/typebox'
import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../../db/client.ts'
import { newId } from '../../lib/ids.ts'
import { defineJob } from './jobs.ts'
import { DEFAULT_MAX_ATTEMPTS, type Outbox } from './outbox.ts'
import { outboxJobs } from './outbox.table.ts'

/**
 * A domain event (the module contract, docs/architecture.md): its name, what it means, and the schema of its
 * `data` (the ids involved). Modules declare the events they emit in their module file; the
 * catalogue of all of them is what webhooks deliver and the API reference publishes.
 */
export interface EventType<S extends TObject = TObject> {
  readonly name: string
  readonly description: string
  readonly data: S
}

export const defineEvent = <S extends TObject>(name: string, description: string, data: S): EventType<S> => ({ name, description, data })

/**
 * The outbox job that carries every event: `{ event, timestamp, data }`. Writing it appends the
 * event to the event log when the transaction commits (the `event_log_append` trigger, decision
 * 0117), so every way of emitting an event, `emitEvent` and `eventJobSql` alike, logs it.
 */
export const EVENT_JOB = defineJob(
  'event',
  Type.Object({ event: Type.String(), timestamp: Type.String(), data: Type.Record(Type.String(), Type.Unknown()) }),
)

/** The event job's payload: the event's name, when it happened, and its data. */
const eventPayload = <S extends TObject>(event: EventType<S>, data: Static<S>, at: Date) => ({ event: event.name, timestamp: at.toISOString(), data })

/**
 * Records an event in the caller's business transaction, so it exists, in the event log and in
 * the outbox, if and only if the change commits. `at` is the business time of the change.
 */
export function emitEvent<S extends TObject>(outbox: Outbox, tx: Tx, event: EventType<S>, data: Static<S>, at: Date): Promise<string> {
  return outbox.add(tx, EVENT_JOB, eventPayload(event, data, at))
}

/**
 * For one-statement writes, the body of a CTE: the event's outbox job, written when the CTE named
 * `gate` has a row, so the event exists if and only if the change does. Its placeholders are
 * filled by `eventJobValues`, or, when the statement builds the event's `data` (a JSON
 * expression over `gate`'s columns), by `eventJobValuesWithoutData`.
 */
export function eventJobSql(gate: string, data?: SQL) {
  const placeholder = (name: keyof ReturnType<typeof eventJobValues>) => sql.placeholder(name)
  return sql`insert into ${outboxJobs} (id, topic, payload, status, max_attempts, run_at, created_at)
    select ${placeholder('eventJobId')}::uuid, ${EVENT_JOB.topic}::text, ${data ? sql`jsonb_set(${placeholder('eventPayload')}::jsonb, '{data}', (${data})::jsonb)` : sql`${placeholder('eventPayload')}::jsonb`}, 'pending', ${DEFAULT_MAX_ATTEMPTS}::int,
      ${placeholder('eventAt')}::timestamptz, ${placeholder('eventAt')}::timestamptz
    from ${sql.identifier(gate)}`
}

/** The values `eventJobSql` takes: a new job id, the payload as JSON text, and when the event happened. */
export function eventJobValues<S extends TObject>(event: EventType<S>, data: Static<S>, at: Date) {
  return { eventJobId: newId(), eventPayload: JSON.stringify(eventPayload(event, data, at)), eventAt: at.toISOString() }
}

/** The placeholders of `eventJobSql`. */
export type EventJobValues = ReturnType<typeof eventJobValuesWithoutData>

/** `eventJobValues` for an event whose data its statement builds (`eventJobSql(gate, data)`). */
export function eventJobValuesWithoutData(event: EventType, at: Date) {
  return { eventJobId: newId(), eventPayload: JSON.stringify({ ...eventPayload(event, {}, at) }), eventAt: at.toISOString() }
}
