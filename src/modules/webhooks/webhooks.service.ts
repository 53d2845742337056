import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../config.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { EventType } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { defineStats } from '../../platform/statistics/statistics.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { systemResolver, type Resolver } from './destinations.ts'
import { createEndpointsService } from './endpoints.service.ts'
import { createDeliveriesRepository } from './deliveries.repository.ts'
import { createEndpointsRepository } from './endpoints.repository.ts'
import { createEventLog } from './event-log.service.ts'
import { createWebhookDispatcher } from './webhook-dispatcher.ts'
import { WebhooksStats } from './webhooks.schemas.ts'

function disabledNotice(to: { email: string; fullName: string }, endpoint: { id: string; url: string }, reason: string, appUrl: string) {
  const text = [
    `Hello ${to.fullName},`,
    '',
    `The webhook endpoint ${endpoint.url} (${endpoint.id}) was disabled: ${reason}.`,
    'No more events are sent to it. Its delivery log is at GET /api/v1/admin/webhooks/' + endpoint.id + '/deliveries;',
    'once the receiver works again, enable it with PATCH /api/v1/admin/webhooks/' + endpoint.id + ' { "enabled": true }.',
    'Events of the meantime are in the event log, GET /api/v1/admin/events.',
    '',
    appUrl,
  ].join('\n')
  const escape = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
  const html = `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${text
    .split('\n')
    .map((line) => `<p>${escape(line)}</p>`)
    .join('')}</body></html>`
  return { to: to.email, subject: 'A webhook endpoint was disabled', text, html }
}

/**
 * Webhooks (decisions 0061, 0062, 0117): endpoints, the event log and the fan-out of events,
 * the dispatcher that delivers them, and the notice to the superusers when an endpoint is disabled.
 */
export function createWebhooksService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  logger: FastifyBaseLogger
  config: Pick<Config, 'webhooks' | 'appUrl'>
  events: readonly EventType[]
  users: Pick<UsersService, 'superuserContacts'>
  audit: Pick<AuditService, 'record'>
  resolve?: Resolver
}) {
  const { db, clock, outbox, mailer, logger, config, users, audit } = deps
  const resolve = deps.resolve ?? systemResolver
  const { allowPrivateNetworks } = config.webhooks
  const configured = config.webhooks.url && config.webhooks.secret ? { url: config.webhooks.url, secret: config.webhooks.secret } : undefined

  return {
    ...createEndpointsService({ db, clock, audit, eventNames: () => deps.events.map((event) => event.name), allowPrivateNetworks, resolve }),
    ...createEventLog({ db, clock, configured }),
    dispatcher: createWebhookDispatcher({ db, clock, outbox, logger: logger.child({ component: 'webhooks' }), allowPrivateNetworks, resolve, configured }),

    /** The webhooks section of `GET /admin/stats` (and of the metrics): endpoints, and deliveries by state. */
    statistics: defineStats('webhooks', WebhooksStats, async (executor) => {
      const repository = createDeliveriesRepository(executor)
      const [endpoints, deliveries] = await Promise.all([repository.countEndpoints(), repository.stateCounts()])
      return { endpoints, deliveries }
    }),

    /** Job `mail.webhook_disabled`: one e-mail to each active superuser. */
    async sendDisabledNotice(payload: { endpointId: string; reason: string }): Promise<void> {
      const endpoint = await createEndpointsRepository(db).findById(payload.endpointId)
      if (!endpoint) return
      for (const superuser of await users.superuserContacts(db)) await mailer.send(disabledNotice(superuser, endpoint, payload.reason, config.appUrl))
    },
  }
}

export type WebhooksService = ReturnType<typeof createWebhooksService>
