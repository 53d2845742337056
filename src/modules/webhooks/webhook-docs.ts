import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import type { EventType } from '../../platform/outbox/events.ts'
import { TEST_EVENT } from './webhook-messages.ts'

type OpenApiWebhooks = NonNullable<Extract<NonNullable<FastifyDynamicSwaggerOptions['openapi']>, { webhooks?: unknown }>['webhooks']>

const header = (description: string, example?: string) => ({ required: true, description, schema: { type: 'string', ...(example && { examples: [example] }) } })

/** What every webhook request carries, whatever its event (Standard Webhooks). */
const HEADERS = {
  'webhook-id': header('The event id: the same on every attempt of this message, so receivers can drop duplicates.'),
  'webhook-timestamp': header('Unix time (seconds) of this attempt; refuse messages more than a few minutes old.', '1700000000'),
  'webhook-signature': header(
    'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `{webhook-id}.{webhook-timestamp}.{body}` with the endpoint secret (base64 after `whsec_`); during a secret rotation, one per secret. Verify with any Standard Webhooks library.',
  ),
}

/** Every event carries its place in the event log; the test message, which is not in the log, does not. */
const CURSOR = {
  type: 'string',
  pattern: '^[0-9]+$',
  description:
    "The event's `cursor` in the event log (`GET /admin/events`). Deliveries may arrive in any order and more than once; sorting them by this number (as an integer) gives the order of the log, in which an event never comes before one of the same object that happened before it.",
}

function operation(name: string, description: string, data: object) {
  const logged = name !== TEST_EVENT
  return {
    post: {
      summary: name,
      description: `${description}\n\nA 2xx answer is success; anything else, a timeout (10 s) or a redirect is retried about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later. 410 Gone disables the endpoint.`,
      tags: ['webhooks'],
      parameters: Object.entries(HEADERS).map(([headerName, spec]) => ({ name: headerName, in: 'header', ...spec })),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['event', 'timestamp', ...(logged ? ['cursor'] : []), 'data'],
              properties: {
                event: { type: 'string', const: name },
                timestamp: { type: 'string', format: 'date-time', description: 'When the event happened (ISO 8601, UTC).' },
                ...(logged && { cursor: CURSOR }),
                data,
              },
            },
          },
        },
      },
      responses: { '2XX': { description: 'Received. Any other answer is retried.' } },
    },
  }
}

/**
 * The OpenAPI 3.1 `webhooks` of the API document: one entry per event of the catalogue (every
 * module's `defineEvent`), with its data schema, plus the test message.
 */
export function webhooksDocument(events: readonly EventType[]): OpenApiWebhooks {
  const entries = events.map((event) => [event.name, operation(event.name, event.description, JSON.parse(JSON.stringify(event.data)) as object)] as const)
  entries.push([
    TEST_EVENT,
    operation(TEST_EVENT, 'Sent by `POST /admin/webhooks/{webhookId}/test` to that endpoint only, whatever the events it subscribes to. Not an event to subscribe to: `events` refuses it.', {
      type: 'object',
      required: ['endpointId'],
      properties: { endpointId: { type: 'string', format: 'uuid' } },
    }),
  ])
  return Object.fromEntries(entries) as OpenApiWebhooks
}
