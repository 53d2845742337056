import { escapeHtml } from '../../lib/text.ts'
import { Type } from '@sinclair/typebox'
import type { Db } from '../../db/client.ts'
import { MINUTE } from '../../lib/clock.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createMessagingRepository } from './messaging.repository.ts'

/** A recipient with no open socket is e-mailed at once, then at most once per conversation per 15 minutes (decision 0053). */
export const EMAIL_EVERY = 15 * MINUTE

export const MESSAGING_JOBS = {
  newMessageEmail: defineJob('mail.new_message', Type.Object({ messageId: Type.String(), recipientId: Type.String() })),
}

/** The e-mail to a recipient who was away (decision 0053), sent by the worker. */
export function createMessageEmails(deps: { db: Db; mailer: Mailer; appUrl: string; users: Pick<UsersService, 'findAccountById'>; notifications: Pick<NotificationsService, 'emailWanted'> }) {
  const { db, mailer, users, notifications } = deps
  return {
    /** The e-mail job: skipped when the recipient read the message meanwhile, is no longer active, or switched these e-mails off. */
    async sendNewMessageEmail(job: { messageId: string; recipientId: string }): Promise<void> {
      const repository = createMessagingRepository(db)
      const message = await repository.findMessage(job.messageId)
      if (!message) return
      const [recipient, sender, participants] = await Promise.all([users.findAccountById(db, job.recipientId), users.findAccountById(db, message.senderId), repository.participantsOf(message.conversationId)])
      const reader = participants.find((participant) => participant.userId === job.recipientId)
      if (!recipient?.isActive || !sender || !reader || reader.lastReadSeq >= message.seq) return
      if (!(await notifications.emailWanted(db, recipient.id, 'message.received'))) return
      const link = `${deps.appUrl}/messages/${message.conversationId}`
      const preview = message.content.length > 200 ? `${message.content.slice(0, 200)}…` : message.content
      const what = message.attachmentId ? 'sent you a file' : 'wrote to you'
      await mailer.send({
        to: recipient.email,
        subject: `New message from ${sender.fullName}`,
        text: `${sender.fullName} ${what}:\n\n${preview}\n\nReply: ${link}\n`,
        html: `<p>${escapeHtml(sender.fullName)} ${what}:</p><blockquote>${escapeHtml(preview)}</blockquote><p><a href="${escapeHtml(link)}">Reply</a></p>`,
      })
    },
  }
}
