import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, Message, Page, PageQuery, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireSuperuser } from '../../http/auth-hooks.ts'
import { webhooksErrors } from './webhooks.errors.ts'
import { DeliveriesQuery, Delivery, Endpoint, endpointBodies, EndpointWithSecret, EventLogPage, EventsQuery } from './webhooks.schemas.ts'
import type { WebhooksService } from './webhooks.service.ts'

const tags = ['webhooks']

/** What the log promises about its order (decision 0117). */
const EVENT_LOG_DESCRIPTION = [
  'Every event, oldest first, in the order its change committed. Poll with `after` set to the last `cursor` read (`nextCursor`). An event is in the log as soon as its change is committed, and a later commit always gets a greater cursor, so a poller never misses one.',
  '',
  'Events of one object (an order, a service, a payout, a user) are listed in the order they happened: `order.created` always comes before the `order.completed` of the same order. Across objects the log follows `timestamp` except between changes that were under way at the same time: an event may follow one whose `timestamp` is later, by at most the time its own change took from reading the clock to committing (milliseconds: no change waits on the network inside its transaction), plus the clock difference between API instances.',
].join('\n')
const security = [{ bearerAuth: [] }]
const EndpointParams = IdParams('webhookId')
const DeliveryParams = IdParams('deliveryId')

type App = Parameters<FastifyPluginAsyncTypebox>[0]

/** `/admin/webhooks`, `/admin/webhook-deliveries` and `/admin/events` (superuser; decisions 0060, 0062). */
export const webhooksAdminRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService; eventNames: readonly string[] }> = async (app, { webhooks, eventNames }) => {
  const bodies = endpointBodies(eventNames)
  app.addHook('preValidation', requireSuperuser)

  // The groups register in this order: it is the order of the paths in the OpenAPI document and in clients/ts.
  endpointRoutes(app, webhooks, bodies)
  deliveryRoutes(app, webhooks)
  eventLogRoutes(app, webhooks)
}

/** Registering, reading, changing and deleting endpoints, and rotating their secrets. */
function endpointRoutes(app: App, webhooks: WebhooksService, bodies: ReturnType<typeof endpointBodies>) {
  app.post(
    '/admin/webhooks',
    {
      schema: {
        tags,
        security,
        summary: 'Register a webhook endpoint (superuser)',
        description:
          'Every event it subscribes to (`events`; omitted: all) is POSTed to `url`, signed in the Standard Webhooks format with the `whsec_` `secret` of this answer, which is not shown again. A `url` that is not http(s), carries credentials, resolves to a cloud metadata or platform address (always) or into a private network (unless `WEBHOOK_ALLOW_PRIVATE_NETWORKS` is true) is 400 on `url`; an unknown event name, or `webhook.test`, is 400 on `events`.',
        body: bodies.create,
        response: responses({ 201: Envelope(EndpointWithSecret) }, 400, 401, 403),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await webhooks.createEndpoint(actorOf(request), request.body))),
  )

  app.get(
    '/admin/webhooks',
    { schema: { tags, security, summary: 'Webhook endpoints (superuser)', description: 'Oldest first; secrets are never listed.', querystring: PageQuery, response: responses({ 200: Envelope(Page(Endpoint)) }, 400, 401, 403) } },
    async (request) => ok(await webhooks.listEndpoints(request.query)),
  )

  app.get(
    '/admin/webhooks/:webhookId',
    { schema: { tags, security, summary: 'A webhook endpoint (superuser)', params: EndpointParams, response: responses({ 200: Envelope(Endpoint) }, 401, 403, 404) } },
    async (request) => ok(await webhooks.getEndpoint(request.params.webhookId)),
  )

  app.patch(
    '/admin/webhooks/:webhookId',
    {
      schema: {
        tags,
        security,
        summary: 'Change a webhook endpoint (superuser)',
        description: '`enabled: true` enables a disabled endpoint again. The configured endpoint (`source: config`) only takes `enabled` (422 `STATIC_ENDPOINT`).',
        params: EndpointParams,
        body: bodies.update,
        response: responses({ 200: Envelope(Endpoint) }, 400, 401, 403, 404, webhooksErrors.STATIC_ENDPOINT),
      },
    },
    async (request) => ok(await webhooks.updateEndpoint(actorOf(request), request.params.webhookId, request.body)),
  )

  app.delete(
    '/admin/webhooks/:webhookId',
    {
      schema: {
        tags,
        security,
        summary: 'Delete a webhook endpoint (superuser)',
        description: 'With its delivery log. The configured endpoint cannot be deleted (422 `STATIC_ENDPOINT`).',
        params: EndpointParams,
        response: responses({ 200: Envelope(Message) }, 401, 403, 404, webhooksErrors.STATIC_ENDPOINT),
      },
    },
    async (request) => {
      await webhooks.deleteEndpoint(actorOf(request), request.params.webhookId)
      return ok({ message: 'Webhook endpoint deleted' })
    },
  )

  app.post(
    '/admin/webhooks/:webhookId/rotate-secret',
    {
      schema: {
        tags,
        security,
        summary: 'Rotate the signing secret (superuser)',
        description: 'Answers the new secret, once. For 24 hours both secrets sign every message (two `v1,` signatures in `webhook-signature`), so receivers can switch without missing any.',
        params: EndpointParams,
        response: responses({ 200: Envelope(EndpointWithSecret) }, 401, 403, 404, webhooksErrors.STATIC_ENDPOINT),
      },
    },
    async (request) => ok(await webhooks.rotateSecret(actorOf(request), request.params.webhookId)),
  )
}

/** An endpoint's deliveries: a test message, the delivery log and a manual retry. */
function deliveryRoutes(app: App, webhooks: WebhooksService) {
  app.post(
    '/admin/webhooks/:webhookId/test',
    {
      schema: {
        tags,
        security,
        summary: 'Send a test message (superuser)',
        description: 'Queues a signed `webhook.test` message (`data: { endpointId }`) to this endpoint alone; the answer is its delivery, whose outcome the delivery log shows.',
        params: EndpointParams,
        response: responses({ 202: Envelope(Delivery) }, 401, 403, 404, webhooksErrors.ENDPOINT_DISABLED),
      },
    },
    async (request, reply) => reply.status(202).send(ok(await webhooks.sendTest(actorOf(request), request.params.webhookId))),
  )

  app.get(
    '/admin/webhooks/:webhookId/deliveries',
    {
      schema: {
        tags,
        security,
        summary: "An endpoint's delivery log (superuser)",
        description: 'Newest first, each with its attempts: status code, latency and the first 1 KB of the answer.',
        params: EndpointParams,
        querystring: DeliveriesQuery,
        response: responses({ 200: Envelope(Page(Delivery)) }, 400, 401, 403, 404),
      },
    },
    async (request) => ok(await webhooks.listDeliveries(request.params.webhookId, request.query.status, request.query)),
  )

  app.post(
    '/admin/webhook-deliveries/:deliveryId/retry',
    {
      schema: {
        tags,
        security,
        summary: 'Send a delivery again (superuser)',
        description: 'Now, with the same `webhook-id` and a fresh retry schedule; a succeeded delivery is replayed.',
        params: DeliveryParams,
        response: responses({ 202: Envelope(Delivery) }, 401, 403, 404, webhooksErrors.ENDPOINT_DISABLED, webhooksErrors.DELIVERY_IN_PROGRESS),
      },
    },
    async (request, reply) => reply.status(202).send(ok(await webhooks.retryDelivery(actorOf(request), request.params.deliveryId))),
  )
}

function eventLogRoutes(app: App, webhooks: WebhooksService) {
  app.get(
    '/admin/events',
    {
      schema: {
        tags,
        security,
        summary: 'The event log (superuser)',
        description: EVENT_LOG_DESCRIPTION,
        querystring: EventsQuery,
        response: responses({ 200: Envelope(EventLogPage) }, 400, 401, 403),
      },
    },
    async (request) => ok(await webhooks.listEvents(request.query.after, request.query.limit)),
  )
}