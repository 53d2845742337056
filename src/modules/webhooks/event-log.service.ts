import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { createDeliveriesRepository } from './deliveries.repository.ts'
import { messageBody } from './endpoints.service.ts'
import { createEndpointsRepository } from './endpoints.repository.ts'
import { createEventLogRepository } from './event-log.repository.ts'
import type { EventRow } from './webhooks.table.ts'

/** The id of the static endpoint of `WEBHOOK_URL`: one row, whatever URL it points to over time. */
export const STATIC_ENDPOINT_ID = '00000000-0000-7000-8000-000000000001'

export interface RecordedEvent {
  /** The event's id: the id of the outbox job that carried it. */
  id: string
  event: string
  timestamp: string
  data: Record<string, unknown>
}

const toLogEntry = (row: EventRow) => ({
  id: row.id,
  cursor: String(row.cursor),
  event: row.event,
  timestamp: row.occurredAt.toISOString(),
  data: row.data,
})

/**
 * The event log and the fan-out to endpoints (decision 0060). The outbox job of each event runs
 * `recordEvent`, which in one transaction appends the event to the ordered log and creates one
 * delivery per subscribed endpoint; both are idempotent, so a job that runs twice changes nothing.
 */
export function createEventLog(deps: { db: Db; clock: Clock; configured?: { url: string; secret: string } }) {
  const { db, clock, configured } = deps

  return {
    async recordEvent(event: RecordedEvent): Promise<void> {
      await db.transaction(async (tx) => {
        const now = clock.now()
        const endpoints = createEndpointsRepository(tx)
        if (configured) await endpoints.upsertStatic({ id: STATIC_ENDPOINT_ID, url: configured.url, secret: configured.secret, at: now })
        else await endpoints.disable(STATIC_ENDPOINT_ID, 'WEBHOOK_URL is no longer configured', now)
        const log = createEventLogRepository(tx)
        await log.lockAppends()
        const occurredAt = new Date(event.timestamp)
        const appended = await log.append({ id: event.id, event: event.event, occurredAt, data: event.data, recordedAt: now })
        if (!appended) return
        const body = messageBody(event.event, occurredAt, event.data)
        const subscribed = await endpoints.subscribedTo(event.event)
        await createDeliveriesRepository(tx).insertMany(
          subscribed.map((endpoint) => ({ id: newId(), endpointId: endpoint.id, messageId: event.id, event: event.event, body, status: 'pending' as const, nextAttemptAt: now, createdAt: now })),
        )
      })
    },

    /** `GET /admin/events`: the events after a cursor, oldest first, and the cursor to ask from next. */
    async listEvents(after: string | undefined, limit: number) {
      const cursor = after === undefined ? 0 : Number(after)
      if (!Number.isSafeInteger(cursor) || cursor < 0) throw fieldError('after', 'must be a cursor returned by this endpoint')
      const rows = await createEventLogRepository(db).listAfter(cursor, limit)
      const items = rows.map(toLogEntry)
      return { items, nextCursor: items.at(-1)?.cursor ?? String(cursor), hasMore: items.length === limit }
    },
  }
}

export type EventLog = ReturnType<typeof createEventLog>
