import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, PageQuery, Timestamp } from '../../http/common.schemas.ts'
import { deliveryStatuses, endpointSources } from './webhooks.table.ts'

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  // http or https, and no `user:password@` before the host.
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#@]+([/?#]\\S*)?$',
  errorMessage: 'must be an http or https URL without credentials, at most 2048 characters',
  description: 'An http or https URL without credentials; private networks are refused unless `WEBHOOK_ALLOW_PRIVATE_NETWORKS` is true.',
})
const Description = Nullable(Type.String({ maxLength: 500 }))
/**
 * The catalogue's event names, as the API reference lists them under `webhooks`; `webhook.test` is
 * not among them: every endpoint receives it when it is tested, whatever it subscribes to.
 */
const EventNames = (names: readonly string[]) =>
  Nullable(
    Type.Array(Type.Unsafe<string>({ type: 'string', enum: [...names], errorMessage: `must be one of the events: ${names.join(', ')} (webhook.test is not one: every endpoint receives it when it is tested)` }), {
      minItems: 1,
      maxItems: 100,
      description: 'Event names this endpoint receives: the `webhooks` of this document except `webhook.test`, which every endpoint receives when it is tested. Omitted or null: every event.',
    }),
  )

/** The bodies that register and change an endpoint: their `events` are the names of this catalogue. */
export function endpointBodies(eventNames: readonly string[]) {
  const create = Type.Object(
    {
      url: Url,
      description: Type.Optional(Description),
      events: Type.Optional(EventNames(eventNames)),
      enabled: Type.Optional(Type.Boolean({ default: true })),
    },
    {
      additionalProperties: false,
      examples: [{ url: 'https://hooks.example.com/marketplace/orders', description: 'Order sync for the accounting system', events: ['order.created', 'order.completed', 'payout.processed'], enabled: true }],
    },
  )
  const update = Type.Object(
    {
      url: Type.Optional(Url),
      description: Type.Optional(Description),
      events: Type.Optional(EventNames(eventNames)),
      enabled: Type.Optional(Type.Boolean({ description: 'true enables a disabled endpoint again (its pending deliveries resume).' })),
    },
    { additionalProperties: false, minProperties: 1, examples: [{ events: ['order.created', 'order.completed', 'order.cancelled', 'payout.processed'], enabled: true }] },
  )
  return { create, update }
}
export type CreateEndpointBody = Static<ReturnType<typeof endpointBodies>['create']>
export type UpdateEndpointBody = Static<ReturnType<typeof endpointBodies>['update']>

export const Endpoint = Type.Object({
  id: Id,
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Nullable(Type.Array(Type.String())),
  enabled: Type.Boolean(),
  source: Type.Union(
    endpointSources.map((value) => Type.Literal(value)),
    { description: '`api`: registered here; `config`: the static endpoint of `WEBHOOK_URL`.' },
  ),
  disabledReason: Nullable(Type.String()),
  disabledAt: Nullable(Timestamp),
  failingSince: Nullable(Type.String({ format: 'date-time', description: 'Start of the current run of failed attempts; a day of them disables the endpoint.' })),
  previousSecretExpiresAt: Nullable(Type.String({ format: 'date-time', description: 'During a rotation: until when the previous secret signs too.' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

export const EndpointWithSecret = Type.Composite([
  Endpoint,
  Type.Object({ secret: Type.String({ description: 'The `whsec_` signing secret. Shown in this answer only: keep it.' }) }),
])

const DeliveryStatus = Type.Union(deliveryStatuses.map((value) => Type.Literal(value)))

export const Attempt = Type.Object({
  attempt: Type.Integer(),
  startedAt: Timestamp,
  latencyMs: Type.Integer(),
  statusCode: Nullable(Type.Integer()),
  succeeded: Type.Boolean(),
  error: Nullable(Type.String()),
  responseExcerpt: Nullable(Type.String({ description: 'At most 1 KB of the answer.' })),
})

export const Delivery = Type.Object({
  id: Id,
  endpointId: Id,
  webhookId: Type.String({ description: 'The `webhook-id` header: the event id, the same on every attempt.' }),
  event: Type.String(),
  status: DeliveryStatus,
  attemptCount: Type.Integer(),
  nextAttemptAt: Nullable(Timestamp),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  createdAt: Timestamp,
  completedAt: Nullable(Timestamp),
  attempts: Type.Array(Attempt),
})

export const DeliveriesQuery = Type.Composite([PageQuery, Type.Object({ status: Type.Optional(DeliveryStatus) })])
export type DeliveriesQuery = Static<typeof DeliveriesQuery>

export const EventsQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ maxLength: 15, pattern: '^[0-9]{1,15}$', description: 'The `cursor` of the last event already read; omitted: from the first event.' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Events per answer, at most 100.' }),
  },
)
export type EventsQuery = Static<typeof EventsQuery>

export const LoggedEvent = Type.Object({
  id: Type.String({ description: 'The event id (the `webhook-id` of its deliveries).' }),
  cursor: Type.String({ description: 'Its place in the log, a decimal integer that grows with every event; pass it as `after` to read the events that follow. Webhook deliveries of the event carry it too.' }),
  event: Type.String(),
  timestamp: Timestamp,
  data: Type.Record(Type.String(), Type.Unknown()),
})

export const EventLogPage = Type.Object({
  items: Type.Array(LoggedEvent),
  nextCursor: Type.String({ description: 'The `after` of the next call (the last cursor here, or the one given when there is nothing new).' }),
  hasMore: Type.Boolean({ description: 'True when the page is full: ask again at once.' }),
})

export const WebhooksStats = Type.Object({
  endpoints: Type.Object({ enabled: Type.Integer(), disabled: Type.Integer() }, { description: 'Registered endpoints (the static one not included).' }),
  deliveries: Type.Object(
    {
      waiting: Type.Integer({ description: 'Not delivered yet: due, in flight or waiting for a retry.' }),
      retrying: Type.Integer({ description: 'Among them, those whose last attempt failed.' }),
      failed: Type.Integer({ description: 'Gave up after a day of failures, or their endpoint was disabled.' }),
    },
    { description: 'Deliveries to every endpoint.' },
  ),
})
