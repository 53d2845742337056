import { boolean, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'

export const endpointSources = ['api', 'config'] as const
export type EndpointSource = (typeof endpointSources)[number]

/**
 * A destination of webhooks (decision 0062): registered by a superuser
 * (`source = api`) or the static endpoint of `WEBHOOK_URL` (`source = config`). The secret signs
 * every delivery; during a rotation the previous one signs too, until `previous_secret_expires_at`.
 */
export const webhookEndpoints = pgTable('webhook_endpoints', {
  id: uuid('id').primaryKey(),
  source: text('source', { enum: endpointSources }).notNull(),
  url: text('url').notNull(),
  description: text('description'),
  /** Event names it receives; null: every event. */
  events: text('events').array(),
  enabled: boolean('enabled').notNull(),
  secret: text('secret').notNull(),
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, mode: 'date' }),
  /** Start of the current run of failed attempts; null after a success. A day of failures disables it. */
  failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
  disabledReason: text('disabled_reason'),
  disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
})

export const deliveryStatuses = ['pending', 'delivering', 'succeeded', 'failed'] as const
export type DeliveryStatus = (typeof deliveryStatuses)[number]

/**
 * One message to one endpoint, retried on its schedule. `body` is the exact JSON that is signed
 * and sent on every attempt; `message_id` is its `webhook-id`. A claim is a lease
 * (`locked_until`): a worker that dies mid-delivery loses it and another sends the same message.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    messageId: uuid('message_id').notNull(),
    event: text('event').notNull(),
    body: text('body').notNull(),
    status: text('status', { enum: deliveryStatuses }).notNull(),
    /** Attempts made so far (numbers the attempt rows). */
    attempts: integer('attempts').notNull().default(0),
    /** Failed attempts in the current retry schedule (a manual retry starts a new one). */
    scheduleStep: integer('schedule_step').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull(),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [
    uniqueIndex('webhook_deliveries_endpoint_message_idx').on(table.endpointId, table.messageId),
    index('webhook_deliveries_due_idx').on(table.status, table.nextAttemptAt),
    index('webhook_deliveries_endpoint_created_idx').on(table.endpointId, table.createdAt),
  ],
)

/** Every attempt of a delivery, for the delivery log. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: uuid('id').primaryKey(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    latencyMs: integer('latency_ms').notNull(),
    statusCode: integer('status_code'),
    succeeded: boolean('succeeded').notNull(),
    error: text('error'),
    /** At most 1 KB of the receiver's answer. */
    responseExcerpt: text('response_excerpt'),
  },
  (table) => [uniqueIndex('webhook_attempts_delivery_attempt_idx').on(table.deliveryId, table.attempt)],
)

export type EndpointRow = typeof webhookEndpoints.$inferSelect
export type DeliveryRow = typeof webhookDeliveries.$inferSelect
export type AttemptRow = typeof webhookAttempts.$inferSelect
