import { escapeHtml } from '../../lib/text.ts'
import { Type } from '@sinclair/typebox'
import type { Db, Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer, MailMessage } from '../../platform/mail/mailer.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { UsersService } from '../users/users.module.ts'
import { emailRuleOf, present, type LinkType, type NotificationKind } from './notification-kinds.ts'
import { createNotificationsRepository } from './notifications.repository.ts'

/**
 * The job each new notification comes with: written by `notify`, and by the trigger on events
 * (`notifications-from-events.sql` writes the same topic and payload).
 */
export const NOTIFICATION_JOBS = {
  deliver: defineJob('notification.deliver', Type.Object({ notificationId: Type.String() })),
}

/** Old notifications are deleted this many at a time, so one sweep never holds many row locks. */
const PURGE_BATCH = 1000

/** Where a generic e-mail's link leads in the front end. */
const pathOf: Record<LinkType, (id: string) => string> = {
  order: (id) => `/orders/${id}`,
  conversation: (id) => `/messages/${id}`,
  service: (id) => `/services/${id}`,
  payout: () => '/wallet',
  kyc_submission: () => '/seller/kyc',
  user: (id) => `/users/${id}`,
}

/** The e-mail of a notification whose kind has no e-mail of its own: its title, body and link. */
function notificationEmail(to: { email: string; fullName: string }, notification: { title: string; body: string }, link: string, settable: boolean): MailMessage {
  const lines = [`Hello ${to.fullName},`, notification.body, `Open it: ${link}`, ...(settable ? ['You chose to receive this by e-mail; change it in your notification settings.'] : [])]
  return {
    to: to.email,
    subject: notification.title,
    text: lines.join('\n\n'),
    html: ['<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">', ...lines.map((line) => `<p>${escapeHtml(line)}</p>`), '</body></html>'].join(''),
  }
}

/** The worker's half: each new notification pushed to its person's sockets and e-mailed when wanted; old ones deleted. */
export function createNotificationDelivery(deps: {
  db: Db
  clock: Clock
  mailer: Mailer
  realtime: Pick<RealtimeHub, 'publish'>
  users: Pick<UsersService, 'findAccountById'>
  emailWanted: (executor: Executor, userId: string, kind: NotificationKind) => Promise<boolean>
  appUrl: string
  currency: string
  retentionMs: number
}) {
  const { db, clock, mailer, realtime, users } = deps

  return {
    /**
     * The `notification.deliver` job: a `notification` frame to every socket of the person, on
     * every instance; then the e-mail, for a kind without its own when the person wants it, and
     * for security news to any account that is still active.
     */
    async deliver(job: { notificationId: string }): Promise<void> {
      const row = await createNotificationsRepository(db).findById(job.notificationId)
      if (!row) return
      const notification = present(row, deps.currency)
      await realtime.publish([row.userId], { type: 'notification', data: notification })
      const rule = emailRuleOf(row.kind)
      if (rule === 'own') return
      const account = await users.findAccountById(db, row.userId)
      if (!account?.isActive) return
      if (rule === 'generic' && (account.suspendedAt !== null || !(await deps.emailWanted(db, row.userId, row.kind as NotificationKind)))) return
      const link = `${deps.appUrl}${pathOf[notification.link.type](notification.link.id)}`
      await mailer.send(notificationEmail(account, notification, link, rule === 'generic'))
    },

    /** The periodic sweep: notifications older than NOTIFICATION_RETENTION_DAYS, deleted in batches. */
    async purgeExpired(): Promise<number> {
      const cutoff = new Date(clock.now().getTime() - deps.retentionMs)
      const repository = createNotificationsRepository(db)
      let total = 0
      for (;;) {
        const deleted = await repository.deleteCreatedBefore(cutoff, PURGE_BATCH)
        total += deleted
        if (deleted < PURGE_BATCH) return total
      }
    },
  }
}
