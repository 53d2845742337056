import type { Actor } from '../../access/access.ts'
import type { Db, Executor, Tx } from '../../db/client.ts'
import { offsetOf } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { isUuid, newId } from '../../lib/ids.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { NOTIFICATION_JOBS } from './notification-delivery.service.ts'
import { present, type LinkType, type NotificationKind } from './notification-kinds.ts'
import { createNotificationsRepository } from './notifications.repository.ts'
import type { ListNotificationsQuery, MarkReadBody, NotificationPage } from './notifications.schemas.ts'

/** A notification another module writes in its own transaction (a message to someone away). */
export interface NewNotification {
  userId: string
  kind: NotificationKind
  link: { type: LinkType; id: string }
  /** What its title and body are rendered from. */
  data: Record<string, unknown>
}

const encodeCursor = (row: { createdAt: Date; id: string }) => Buffer.from(`${row.createdAt.getTime()}.${row.id}`).toString('base64url')

function decodeCursor(text: string): { createdAt: Date; id: string } {
  const [ms, id] = Buffer.from(text, 'base64url').toString('utf8').split('.')
  const at = Number(ms)
  if (!id || !isUuid(id) || !Number.isSafeInteger(at)) throw fieldError('cursor', 'is not a cursor this list returned')
  return { createdAt: new Date(at), id }
}

/** A person's notifications: writing one, the list, marking them read, the unread count. */
export function createNotificationInbox(deps: { db: Db; clock: Clock; outbox: Outbox; currency: string }) {
  const { db, clock, outbox, currency } = deps

  return {
    /**
     * Writes a notification in the caller's transaction, with the job that pushes it (and e-mails
     * it when its kind is e-mailed) once the transaction commits.
     */
    async notify(tx: Tx, notification: NewNotification): Promise<void> {
      const { userId, kind, link, data } = notification
      const row = await createNotificationsRepository(tx).insert({ id: newId(), userId, kind, linkType: link.type, linkId: link.id, data, readAt: null, createdAt: clock.now() })
      await outbox.add(tx, NOTIFICATION_JOBS.deliver, { notificationId: row.id })
    },

    /** For `GET /users/me`: how many of the person's notifications are unread. */
    unreadCount: (executor: Executor, userId: string): Promise<number> => createNotificationsRepository(executor).count(userId, true),

    /** `GET /notifications`: newest first, by page or after a cursor; `unread=true` keeps the unread ones. */
    async listNotifications(actor: Actor, query: ListNotificationsQuery): Promise<NotificationPage> {
      const repository = createNotificationsRepository(db)
      const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined
      const unreadOnly = query.unread === true
      const [rows, total] = await Promise.all([repository.list(actor.id, unreadOnly, { after, offset: offsetOf(query) }, query.limit + 1), repository.count(actor.id, unreadOnly)])
      const hasMore = rows.length > query.limit
      const page = rows.slice(0, query.limit)
      const last = page.at(-1)
      return {
        items: page.map((row) => present(row, currency)),
        pagination: {
          page: after ? 1 : query.page,
          limit: query.limit,
          total,
          pages: Math.ceil(total / query.limit),
          hasNext: hasMore,
          hasPrev: after !== undefined || query.page > 1,
          nextCursor: hasMore && last ? encodeCursor(last) : null,
        },
      }
    },

    /**
     * `POST /notifications/read`: these of the person's notifications, or all of them. An id that
     * is not theirs (another person's, or none at all) is 404, and then nothing is marked.
     */
    async markRead(actor: Actor, body: MarkReadBody): Promise<{ updated: number; unread: number }> {
      const repository = createNotificationsRepository(db)
      let updated: number
      if (body.ids) {
        const ids = [...new Set(body.ids.map((id) => id.toLowerCase()))]
        const owned = await repository.ownedIds(actor.id, ids)
        if (owned.length < ids.length) throw notFound('Notification')
        updated = await repository.markRead(actor.id, ids, clock.now())
      } else {
        updated = await repository.markRead(actor.id, 'all', clock.now())
      }
      return { updated, unread: await repository.count(actor.id, true) }
    },
  }
}
