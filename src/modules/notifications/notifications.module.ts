import { defineModule } from '../../platform/module.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import type { UsersService } from '../users/users.module.ts'
import { NOTIFICATION_JOBS } from './notification-delivery.service.ts'
import { notificationsRoutes } from './notifications.routes.ts'
import { createNotificationsService } from './notifications.service.ts'
import { notifications, notificationSettings } from './notifications.table.ts'

/**
 * What a person should hear of: notifications written with the events that cause them (a trigger
 * on the outbox, decision 0200), listed and marked read, pushed to the person's sockets and
 * e-mailed per their settings; old ones deleted by the worker.
 */
export const notificationsModule = defineModule({
  name: 'notifications',
  needs: ['users'],
  tables: { notifications, notificationSettings },
  create: ({ config, db, clock, outbox, mailer, realtime }, deps: { users: UsersService }) => {
    const service = createNotificationsService({ db, clock, outbox, mailer, realtime, users: deps.users, appUrl: config.appUrl, currency: config.currency, retentionMs: config.notifications.retentionMs })
    // `GET /users/me` shows the unread count; the users module cannot call this one, so it is told.
    deps.users.registerUnreadNotifications((executor, userId) => service.unreadCount(executor, userId))
    return service
  },
  routes: (api) => async (app) => {
    await app.register(notificationsRoutes, { notifications: api })
  },
  jobs: (api) => [handleJob(NOTIFICATION_JOBS.deliver, (payload) => api.deliver(payload))],
  periodic: (api, { config }) => [{ name: 'purge-old-notifications', everyMs: config.workerTickMs, run: () => api.purgeExpired() }],
})

/**
 * For the modules whose own e-mails match a kind (messages, offers, dispute splits, KYC decisions):
 * `emailWanted(executor, userId, kind)` before sending. For the messaging module: `notify(tx, ...)`
 * writes a notification in its transaction.
 */
export type { NotificationsService } from './notifications.service.ts'
export type { NotificationKind } from './notification-kinds.ts'
