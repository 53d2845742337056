import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { ListNotificationsQuery, MarkReadBody, NotificationPage, NotificationSettings, ReadResult, UpdateNotificationSettingsBody } from './notifications.schemas.ts'
import type { NotificationsService } from './notifications.service.ts'

const tags = ['notifications']
const security = [{ bearerAuth: [] }]

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ notifications: NotificationsService }> = async (app, { notifications }) => {
  app.addHook('preValidation', requireAuth)

  app.get(
    '/notifications',
    {
      schema: {
        tags,
        security,
        summary: 'Your notifications',
        description:
          'Newest first. `unread=true` keeps those not read yet. Page with `page`, or pass the `nextCursor` of a page as `cursor` for the next one (steady while new ones arrive). Each new notification is also pushed to your open sockets (`GET /messages/ws`) as `{ type: "notification", data }`. Notifications older than NOTIFICATION_RETENTION_DAYS are deleted.',
        querystring: ListNotificationsQuery,
        response: responses({ 200: Envelope(NotificationPage) }, 400, 401),
      },
    },
    async (request) => ok(await notifications.listNotifications(actorOf(request), request.query)),
  )

  app.post(
    '/notifications/read',
    {
      schema: {
        tags,
        security,
        summary: 'Mark notifications read',
        description:
          'Send `ids` (up to 100 of yours) or `all: true`, not both. An id that is not one of your notifications answers 404 and nothing is marked. Marking a read one again changes nothing. Answers how many this marked and how many are still unread.',
        body: MarkReadBody,
        response: responses({ 200: Envelope(ReadResult) }, 400, 401, 404),
      },
    },
    async (request) => ok(await notifications.markRead(actorOf(request), request.body)),
  )

  app.get(
    '/users/me/notification-settings',
    {
      schema: {
        tags,
        security,
        summary: 'Your notification settings',
        description: 'For each kind of notification, whether it is e-mailed to you too. Security e-mails (activation, password reset, suspension) are always sent and not listed.',
        response: responses({ 200: Envelope(NotificationSettings) }, 401),
      },
    },
    async (request) => ok(await notifications.getSettings(actorOf(request))),
  )

  app.put(
    '/users/me/notification-settings',
    {
      schema: {
        tags,
        security,
        summary: 'Change your notification settings',
        description: 'Names the kinds to change under `email`; the others keep their setting. A kind that is not listed, a security e-mail among them, is 400 on that field. Answers every setting.',
        body: UpdateNotificationSettingsBody,
        response: responses({ 200: Envelope(NotificationSettings) }, 400, 401),
      },
    },
    async (request) => ok(await notifications.updateSettings(actorOf(request), request.body)),
  )
}
