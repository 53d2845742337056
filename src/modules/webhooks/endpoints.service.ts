import { randomBytes } from 'node:crypto'
import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { AuditService } from '../audit/audit.module.ts'
import { createDeliveriesRepository } from './deliveries.repository.ts'
import { checkedAddress, DestinationError, urlProblem, type Resolver } from './destinations.ts'
import { createEndpointsRepository } from './endpoints.repository.ts'
import { deliveryInProgress, endpointDisabled, staticEndpoint } from './webhooks.errors.ts'
import type { AttemptRow, DeliveryRow, DeliveryStatus, EndpointRow } from './webhooks.table.ts'

/** The event a test send carries; it goes to one endpoint and is not in the event log. */
export const TEST_EVENT = 'webhook.test'
/** How long the previous secret keeps signing after a rotation, so receivers can switch without missing a message. */
export const ROTATION_OVERLAP_MS = DAY

/** A `whsec_` secret: 32 random bytes, base64 (the Standard Webhooks format). */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

/**
 * The exact JSON that is signed and sent: `{ event, timestamp, cursor, data }`. `cursor` is the
 * event's place in the event log, so a receiver can put deliveries, which may arrive in any
 * order, back in the log's order; a test message, which is not in the log, has none.
 */
export const messageBody = (event: string, timestamp: Date, data: Record<string, unknown>, cursor?: string): string =>
  JSON.stringify({ event, timestamp: timestamp.toISOString(), ...(cursor !== undefined && { cursor }), data })

export interface EndpointFields {
  url: string
  description?: string | null
  events?: string[] | null
  enabled?: boolean
}

export function toEndpoint(row: EndpointRow, now: Date) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    source: row.source,
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    failingSince: row.failingSince?.toISOString() ?? null,
    previousSecretExpiresAt: row.previousSecretExpiresAt && row.previousSecretExpiresAt > now ? row.previousSecretExpiresAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export function toDelivery(row: DeliveryRow, attempts: AttemptRow[]) {
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

/**
 * Endpoint management for superusers (decision 0062): registration with the destination checked,
 * updates, secret rotation, test sends, the delivery log and manual retries.
 */
export function createEndpointsService(deps: {
  db: Db
  clock: Clock
  audit: Pick<AuditService, 'record'>
  eventNames: () => readonly string[]
  allowPrivateNetworks: boolean
  resolve: Resolver
}) {
  const { db, clock, audit } = deps

  /**
   * 400 on `url` for a bad form, a cloud metadata or platform destination, or, unless private
   * networks are allowed, a private one. Where they are allowed, a name that does not resolve yet
   * is accepted (a receiver being set up); every delivery checks again.
   */
  async function checkUrl(url: string): Promise<string> {
    const problem = urlProblem(url)
    if (problem) throw fieldError('url', problem)
    try {
      await checkedAddress(new URL(url), deps)
    } catch (error) {
      if (!(error instanceof DestinationError)) throw error
      if (!(deps.allowPrivateNetworks && error.reason === 'unresolved')) throw fieldError('url', `must not point to this destination: ${error.message}`)
    }
    return new URL(url).href
  }

  /** 400 on `events` for a name the catalogue does not have; null (all events) stays null. */
  function checkEvents(events: string[] | null | undefined): string[] | null {
    if (events === undefined || events === null) return null
    // A subscription to it would change nothing: every endpoint gets the test message when tested.
    if (events.includes(TEST_EVENT)) throw fieldError('events', `"${TEST_EVENT}" cannot be subscribed to: it is sent to an endpoint when it is tested (POST /admin/webhooks/{id}/test), whatever its events`)
    const known = new Set(deps.eventNames())
    const unknown = events.filter((name) => !known.has(name))
    if (unknown.length > 0) throw fieldError('events', `unknown event ${unknown.map((name) => JSON.stringify(name)).join(', ')}; known events: ${[...known].join(', ')}`)
    return [...new Set(events)]
  }

  async function find(id: string): Promise<EndpointRow> {
    const row = await createEndpointsRepository(db).findById(id)
    if (!row) throw notFound('Webhook endpoint')
    return row
  }

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

  /** What an audit row says of an endpoint: never its secrets. */
  const endpointState = (row: EndpointRow) => ({ url: row.url, description: row.description, events: row.events, enabled: row.enabled })

  /** The audit row of a superuser's action on an endpoint, in the action's transaction. */
  const recordEndpointAction = (tx: Tx, actor: Actor, action: string, endpointId: string, before: EndpointRow | null, after: Record<string, unknown> | null) =>
    audit.record(tx, { action: `webhook.${action}`, actor, targetType: 'webhook_endpoint', targetId: endpointId, before: before && endpointState(before), after })

  return {
    /** `POST /admin/webhooks`: the secret is in this answer only. */
    async createEndpoint(actor: Actor, fields: EndpointFields) {
      const url = await checkUrl(fields.url)
      const events = checkEvents(fields.events)
      const now = clock.now()
      const secret = newSecret()
      const row = await db.transaction(async (tx) => {
        const inserted = await createEndpointsRepository(tx).insert({
          id: newId(),
          source: 'api',
          url,
          description: fields.description ?? null,
          events,
          enabled: fields.enabled ?? true,
          secret,
          createdAt: now,
          updatedAt: now,
        })
        await recordEndpointAction(tx, actor, 'create', inserted.id, null, endpointState(inserted))
        return inserted
      })
      return { ...toEndpoint(row, now), secret }
    },

    async listEndpoints(page: PageRequest) {
      const { rows, total } = await createEndpointsRepository(db).list(offsetOf(page), page.limit)
      const now = clock.now()
      return toPage(
        rows.map((row) => toEndpoint(row, now)),
        total,
        page,
      )
    },

    getEndpoint: async (id: string) => toEndpoint(await find(id), clock.now()),

    /** `PATCH`: enabling again clears the reason it was disabled and its run of failures. */
    async updateEndpoint(actor: Actor, id: string, changes: Partial<EndpointFields>) {
      const editsFields = changes.url !== undefined || changes.events !== undefined || changes.description !== undefined
      if ((await find(id)).source === 'config' && editsFields) throw staticEndpoint('edited')
      // Resolved before the transaction: no lock is held while DNS answers.
      const url = changes.url === undefined ? undefined : await checkUrl(changes.url)
      const events = changes.events === undefined ? undefined : checkEvents(changes.events)
      const now = clock.now()
      const row = await db.transaction(async (tx) => {
        const endpoints = createEndpointsRepository(tx)
        const current = await endpoints.lockById(id)
        if (!current) throw notFound('Webhook endpoint')
        const enabling = changes.enabled === true && !current.enabled
        const updated = await endpoints.update(id, {
          ...(url !== undefined && { url }),
          ...(events !== undefined && { events }),
          ...(changes.description !== undefined && { description: changes.description }),
          ...(changes.enabled !== undefined && { enabled: changes.enabled }),
          ...(enabling && { disabledReason: null, disabledAt: null, failingSince: null }),
          ...(changes.enabled === false && current.enabled && { disabledReason: 'Disabled by a superuser', disabledAt: now }),
          updatedAt: now,
        })
        await recordEndpointAction(tx, actor, 'update', id, current, endpointState(updated!))
        return updated!
      })
      return toEndpoint(row, now)
    },

    /** `DELETE`: the endpoint and its delivery log. */
    async deleteEndpoint(actor: Actor, id: string) {
      await db.transaction(async (tx) => {
        const endpoints = createEndpointsRepository(tx)
        const current = await endpoints.lockById(id)
        if (!current) throw notFound('Webhook endpoint')
        if (current.source === 'config') throw staticEndpoint('deleted')
        await endpoints.delete(id)
        await recordEndpointAction(tx, actor, 'delete', id, current, null)
      })
    },

    /** A new secret, shown once; the previous one keeps signing for ROTATION_OVERLAP_MS. The audit row holds neither. */
    async rotateSecret(actor: Actor, id: string) {
      const now = clock.now()
      const secret = newSecret()
      const row = await db.transaction(async (tx) => {
        const endpoints = createEndpointsRepository(tx)
        const current = await endpoints.lockById(id)
        if (!current) throw notFound('Webhook endpoint')
        if (current.source === 'config') throw staticEndpoint('rotated')
        const previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS)
        const rotated = await endpoints.update(id, { secret, previousSecret: current.secret, previousSecretExpiresAt, updatedAt: now })
        await recordEndpointAction(tx, actor, 'rotate_secret', id, null, { previousSecretExpiresAt: previousSecretExpiresAt.toISOString() })
        return rotated!
      })
      return { ...toEndpoint(row, now), secret }
    },

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

export type EndpointsService = ReturnType<typeof createEndpointsService>
