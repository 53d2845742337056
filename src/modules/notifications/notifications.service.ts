import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { UsersService } from '../users/users.module.ts'
import { createNotificationDelivery } from './notification-delivery.service.ts'
import { createNotificationInbox } from './notification-inbox.service.ts'
import { createNotificationSettings } from './notification-settings.service.ts'

/**
 * Notifications (docs/notifications.md): a person's inbox, their e-mail settings per kind, and the
 * worker's delivery (push and e-mail) and retention. Each lives in its own file; this composes them.
 */
export function createNotificationsService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  realtime: Pick<RealtimeHub, 'publish'>
  users: Pick<UsersService, 'findAccountById'>
  appUrl: string
  currency: string
  retentionMs: number
}) {
  const settings = createNotificationSettings(deps)
  return {
    ...createNotificationInbox(deps),
    ...settings,
    ...createNotificationDelivery({ ...deps, emailWanted: settings.emailWanted }),
  }
}

export type NotificationsService = ReturnType<typeof createNotificationsService>
