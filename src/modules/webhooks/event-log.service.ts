import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { createEventLogRepository } from '../../platform/outbox/event-log.repository.ts'
import type { EventLogRow } from '../../platform/outbox/event-log.table.ts'
import { createDeliveriesRepository } from './deliveries.repository.ts'
import { messageBody } from './webhook-messages.ts'
import { createEndpointsRepository } from './endpoints.repository.ts'

/** The id of the static endpoint of `WEBHOOK_URL`: one row, whatever URL it points to over time. */
export const STATIC_ENDPOINT_ID = '00000000-0000-7000-8000-000000000001'

const toLogEntry = (row: EventLogRow) => ({
  id: row.id,
  cursor: String(row.cursor),
  event: row.event,
  timestamp: row.occurredAt.toISOString(),
  data: row.data,
})

/**
 * The event log as superusers read it, and the fan-out of each event to the endpoints (decision
 * 0117). The platform appends every event to the log when its change commits; the outbox job of
 * the event then runs `deliverEvent`, which creates one delivery per subscribed endpoint, carrying
 * the event's cursor. A job that runs twice creates nothing more.
 */
export function createEventLog(deps: { db: Db; clock: Clock; configured?: { url: string; secret: string } }) {
  const { db, clock, configured } = deps

  return {
    async deliverEvent(eventId: string): Promise<void> {
      // The job and the log row commit together, so the row is there whenever the job runs.
      const logged = await createEventLogRepository(db).findById(eventId)
      if (!logged) throw new Error(`event ${eventId} is not in the event log`)
      await db.transaction(async (tx) => {
        const now = clock.now()
        const endpoints = createEndpointsRepository(tx)
        if (configured) await endpoints.upsertStatic({ id: STATIC_ENDPOINT_ID, url: configured.url, secret: configured.secret, at: now })
        else await endpoints.disable(STATIC_ENDPOINT_ID, 'WEBHOOK_URL is no longer configured', now)
        const body = messageBody(logged.event, logged.occurredAt, logged.data, String(logged.cursor))
        const subscribed = await endpoints.subscribedTo(logged.event)
        await createDeliveriesRepository(tx).insertMany(
          subscribed.map((endpoint) => ({ id: newId(), endpointId: endpoint.id, messageId: logged.id, event: logged.event, body, status: 'pending' as const, nextAttemptAt: now, createdAt: now })),
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
