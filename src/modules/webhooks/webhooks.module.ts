import { SECOND } from '../../lib/clock.ts'
import { defineModule } from '../../platform/module.ts'
import { EVENT_JOB } from '../../platform/outbox/events.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { WEBHOOK_JOBS } from './webhook-jobs.ts'
import { webhooksAdminRoutes } from './webhooks.admin.routes.ts'
import { webhooksErrors } from './webhooks.errors.ts'
import { createWebhooksService } from './webhooks.service.ts'
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from './webhooks.table.ts'

/**
 * Webhooks and the event log (decisions 0060, 0061): every event of the catalogue, which the platform appends
 * to the ordered log when its change commits, is delivered, signed, to the endpoints that
 * subscribe to it, with retries for about a day, and read by superusers from the log.
 * Listed last: it delivers the events of every module before it.
 */
export const webhooksModule = defineModule({
  name: 'webhooks',
  needs: ['users', 'audit'],
  tables: { webhookEndpoints, webhookDeliveries, webhookAttempts },
  create: ({ config, db, clock, outbox, mailer, logger, events }, deps: { users: UsersService; audit: AuditService }) =>
    createWebhooksService({ db, clock, outbox, mailer, logger, config, events, users: deps.users, audit: deps.audit }),
  routes: (api, { events }) => async (app) => {
    await app.register(webhooksAdminRoutes, { webhooks: api, eventNames: events.map((event) => event.name) })
  },
  jobs: (api) => [
    handleJob(EVENT_JOB, (_payload, row) => api.deliverEvent(row.id)),
    handleJob(WEBHOOK_JOBS.endpointDisabled, (payload) => api.sendDisabledNotice(payload)),
  ],
  // Each worker delivers: every second it claims what is due; deliveries run in the background
  // and the worker's stop waits for the ones in flight.
  periodic: (api) => [{ name: 'deliver-webhooks', everyMs: SECOND, run: api.dispatcher.tick, stop: api.dispatcher.settle }],
  statistics: (api) => api.statistics,
  errors: webhooksErrors,
})

export type { WebhooksService } from './webhooks.service.ts'
export { webhooksDocument } from './webhook-docs.ts'
