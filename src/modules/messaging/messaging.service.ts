import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { SessionCheck } from '../auth/auth.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createConversationAccess } from './conversation-access.service.ts'
import { createConversationReading } from './conversation-reading.service.ts'
import { createStaffConversationReading } from './conversation-staff-reading.service.ts'
import { createMessageEmails } from './message-emails.service.ts'
import { createMessageSending } from './message-sending.service.ts'
import { createMessagingRepository } from './messaging.repository.ts'

export { MESSAGING_JOBS } from './message-emails.service.ts'
export type { ListQuery } from './conversation-reading.service.ts'
export type { SendMessage } from './message-sending.service.ts'

/**
 * The messaging module's API (decision 0050): conversations between two users, their
 * messages and attachments, unread counts, realtime frames after commit and e-mail to recipients
 * who are away. Sending, reading and e-mails each live in their own file.
 */
export function createMessagingService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  realtime: Pick<RealtimeHub, 'publish' | 'isOnline'>
  users: Pick<UsersService, 'findAccountById' | 'publicSummariesOf' | 'availableAccountSql' | 'accountStandingSql'>
  uploads: Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles' | 'filesByIds' | 'urlOf'>
  sessions: SessionCheck
  notifications: Pick<NotificationsService, 'notify' | 'emailWanted'>
}) {
  const access = createConversationAccess(deps)
  return {
    ...createMessageSending({ ...deps, access }),
    ...createConversationReading({ ...deps, access }),
    ...createMessageEmails(deps),
    ...createStaffConversationReading({ db: deps.db, access }),

    /** For the offers module: how messages find the offer they present. */
    registerOfferReader: access.registerOfferReader,

    /**
     * For the offers module: a conversation of the caller's and the other participant (404 for
     * anyone else), whether it is a direct one, and whether the other can be written to.
     */
    async conversationParties(executor: Executor, actor: Actor, conversationId: string) {
      const { conversation, other } = await access.conversationFor(executor, actor, conversationId)
      return { conversationId: conversation.id, direct: conversation.directKey !== null, otherId: other.userId, otherAvailable: other.available }
    },

    /** Who may see a conversation's attachments (the uploads access policy for `chat`). */
    isParticipant: (executor: Executor, conversationId: string, userId: string): Promise<boolean> => createMessagingRepository(executor).isParticipant(conversationId, userId),
  }
}

export type MessagingService = ReturnType<typeof createMessagingService>
