import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { AuditService } from '../audit/audit.module.ts'
import { createDeliveriesRepository } from './deliveries.repository.ts'
import { messageBody, TEST_EVENT } from './webhook-messages.ts'
import { createEndpointsRepository } from './endpoints.repository.ts'
import { deliveryInProgress, endpointDisabled } from './webhooks.errors.ts'
import type { AttemptRow, DeliveryRow, DeliveryStatus, EndpointRow } from './webhooks.table.ts'

/** A delivery as superusers see it, with its attempts. */
function toDelivery(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    endpointId: row.endpointId,
    webhookId: row.messageId,
    event: row.event,
    status: row.status,
    attemptCount: row.attempts,
    nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      startedAt: attempt.startedAt.toISOString(),
      latencyMs: attempt.latencyMs,
      statusCode: attempt.statusCode,
      succeeded: attempt.succeeded,
      error: attempt.error,
      responseExcerpt: attempt.responseExcerpt,
    })),
  }
}

export interface DeliveriesDeps {
  db: Db
  clock: Clock
  audit: Pick<AuditService, 'record'>
  /** The endpoint, or 404. */
  find: (id: string) => Promise<EndpointRow>
  /** The audit row of a superuser's action on an endpoint, in the action's transaction. */
  recordEndpointAction: (tx: Tx, actor: Actor, action: string, endpointId: string, before: EndpointRow | null, after: Record<string, unknown> | null) => Promise<unknown>
}

/** An endpoint's deliveries for superusers: test sends, the delivery log and manual retries. */
export function createWebhookDeliveries(deps: DeliveriesDeps) {
  const { db, clock, audit, find, recordEndpointAction } = deps

  /** Deliveries with their attempts, in one query for the attempts. */
  async function describeDeliveries(rows: DeliveryRow[]) {
    const attempts = await createDeliveriesRepository(db).attemptsOf(rows.map((row) => row.id))
    return rows.map((row) =>
      toDelivery(
        row,
        attempts.filter((attempt) => attempt.deliveryId === row.id),
      ),
    )
  }

  return {
    /** Queues a `webhook.test` message to this endpoint alone; the answer is its delivery (pending). */
    async sendTest(actor: Actor, id: string) {
      const now = clock.now()
      const row = await db.transaction(async (tx) => {
        const endpoint = await createEndpointsRepository(tx).findById(id)
        if (!endpoint) throw notFound('Webhook endpoint')
        if (!endpoint.enabled) throw endpointDisabled()
        const delivery = await createDeliveriesRepository(tx).insert({
          id: newId(),
          endpointId: endpoint.id,
          messageId: newId(),
          event: TEST_EVENT,
          body: messageBody(TEST_EVENT, now, { endpointId: endpoint.id }),
          status: 'pending',
          nextAttemptAt: now,
          createdAt: now,
        })
        await recordEndpointAction(tx, actor, 'test', endpoint.id, null, { deliveryId: delivery.id, webhookId: delivery.messageId })
        return delivery
      })
      return toDelivery(row, [])
    },

    async listDeliveries(endpointId: string, status: DeliveryStatus | undefined, page: PageRequest) {
      await find(endpointId)
      const { rows, total } = await createDeliveriesRepository(db).listByEndpoint(endpointId, status, offsetOf(page), page.limit)
      return toPage(await describeDeliveries(rows), total, page)
    },

    /**
     * Sends a delivery again now, with the same `webhook-id` and a fresh retry schedule: a failed
     * one after the receiver is fixed, or a succeeded one to replay it.
     */
    async retryDelivery(actor: Actor, deliveryId: string) {
      const row = await db.transaction(async (tx) => {
        const deliveries = createDeliveriesRepository(tx)
        const current = await deliveries.lockById(deliveryId)
        if (!current) throw notFound('Webhook delivery')
        const endpoint = await createEndpointsRepository(tx).findById(current.endpointId)
        if (!endpoint) throw notFound('Webhook delivery')
        if (current.status === 'delivering' && current.lockedUntil && current.lockedUntil > clock.now()) throw deliveryInProgress()
        if (!endpoint.enabled) throw endpointDisabled()
        const retried = await deliveries.update(deliveryId, { status: 'pending', scheduleStep: 0, nextAttemptAt: clock.now(), lockedUntil: null, completedAt: null })
        // A retry sends the event again to a system outside: on record like any other staff action.
        await audit.record(tx, {
          action: 'webhook_delivery.retry',
          actor,
          targetType: 'webhook_delivery',
          targetId: deliveryId,
          before: { status: current.status, attempts: current.attempts },
          after: { status: retried.status, endpointId: current.endpointId, webhookId: current.messageId },
        })
        return retried
      })
      return (await describeDeliveries([row]))[0]!
    },
  }
}
