import { randomBytes } from 'node:crypto'
import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { AuditService } from '../audit/audit.module.ts'
import { checkedAddress, DestinationError, urlProblem, type Resolver } from './destinations.ts'
import { createEndpointsRepository } from './endpoints.repository.ts'
import { createWebhookDeliveries, type DeliveriesDeps } from './webhook-deliveries.service.ts'
import { TEST_EVENT } from './webhook-messages.ts'
import { staticEndpoint } from './webhooks.errors.ts'
import type { EndpointRow } from './webhooks.table.ts'

/** How long the previous secret keeps signing after a rotation, so receivers can switch without missing a message. */
export const ROTATION_OVERLAP_MS = DAY

/** A `whsec_` secret: 32 random bytes, base64 (the Standard Webhooks format). */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

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

/** What an audit row says of an endpoint: never its secrets. */
const endpointState = (row: EndpointRow) => ({ url: row.url, description: row.description, events: row.events, enabled: row.enabled })

/** What endpoint management is built from. */
interface EndpointsDeps {
  db: Db
  clock: Clock
  audit: Pick<AuditService, 'record'>
  eventNames: () => readonly string[]
  allowPrivateNetworks: boolean
  resolve: Resolver
}

/**
 * 400 on `url` for a bad form, a cloud metadata or platform destination, or, unless private
 * networks are allowed, a private one. Where they are allowed, a name that does not resolve yet
 * is accepted (a receiver being set up); every delivery checks again.
 */
async function checkUrl(url: string, deps: Pick<EndpointsDeps, 'allowPrivateNetworks' | 'resolve'>): Promise<string> {
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
function checkEvents(events: string[] | null | undefined, deps: Pick<EndpointsDeps, 'eventNames'>): string[] | null {
  if (events === undefined || events === null) return null
  // A subscription to it would change nothing: every endpoint gets the test message when tested.
  if (events.includes(TEST_EVENT)) throw fieldError('events', `"${TEST_EVENT}" cannot be subscribed to: it is sent to an endpoint when it is tested (POST /admin/webhooks/{id}/test), whatever its events`)
  const known = new Set(deps.eventNames())
  const unknown = events.filter((name) => !known.has(name))
  if (unknown.length > 0) throw fieldError('events', `unknown event ${unknown.map((name) => JSON.stringify(name)).join(', ')}; known events: ${[...known].join(', ')}`)
  return [...new Set(events)]
}

/** Registering an endpoint and changing it: the destination and the events are checked before any transaction opens. */
function createEndpointRegistration(deps: EndpointsDeps & Pick<DeliveriesDeps, 'find' | 'recordEndpointAction'>) {
  const { db, clock, find, recordEndpointAction } = deps
  return {
    /** `POST /admin/webhooks`: the secret is in this answer only. */
    async createEndpoint(actor: Actor, fields: EndpointFields) {
      const url = await checkUrl(fields.url, deps)
      const events = checkEvents(fields.events, deps)
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

    /** `PATCH`: enabling again clears the reason it was disabled and its run of failures. */
    async updateEndpoint(actor: Actor, id: string, changes: Partial<EndpointFields>) {
      const editsFields = changes.url !== undefined || changes.events !== undefined || changes.description !== undefined
      if ((await find(id)).source === 'config' && editsFields) throw staticEndpoint('edited')
      // Resolved before the transaction: no lock is held while DNS answers.
      const url = changes.url === undefined ? undefined : await checkUrl(changes.url, deps)
      const events = changes.events === undefined ? undefined : checkEvents(changes.events, deps)
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
  }
}

/**
 * Endpoint management for superusers (decision 0062): registration with the destination checked,
 * updates and secret rotation here; test sends, the delivery log and manual retries in
 * `webhook-deliveries.service.ts`.
 */
export function createEndpointsService(deps: EndpointsDeps) {
  const { db, clock, audit } = deps

  async function find(id: string): Promise<EndpointRow> {
    const row = await createEndpointsRepository(db).findById(id)
    if (!row) throw notFound('Webhook endpoint')
    return row
  }

  /** The audit row of a superuser's action on an endpoint, in the action's transaction. */
  const recordEndpointAction = (tx: Tx, actor: Actor, action: string, endpointId: string, before: EndpointRow | null, after: Record<string, unknown> | null) =>
    audit.record(tx, { action: `webhook.${action}`, actor, targetType: 'webhook_endpoint', targetId: endpointId, before: before && endpointState(before), after })

  return {
    ...createWebhookDeliveries({ db, clock, audit, find, recordEndpointAction }),
    ...createEndpointRegistration({ ...deps, find, recordEndpointAction }),

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
  }
}

export type EndpointsService = ReturnType<typeof createEndpointsService>