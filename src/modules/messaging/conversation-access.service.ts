import type { Actor } from '../../access/access.ts'
import type { Executor } from '../../db/client.ts'
import { notFound } from '../../lib/errors.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createOfferSlot } from './message-offers.ts'
import { prepareConversationWithParticipants, type MessageJson } from './messaging.repository.ts'
import type { Message } from './messaging.schemas.ts'
import type { ConversationRow, MessageRow, ParticipantRow } from './messaging.table.ts'

/** What the reading and the sending use cases share: the 404 for non-participants, and messages as clients see them. */
export function createConversationAccess(deps: { uploads: Pick<UploadsService, 'filesByIds' | 'urlOf'>; users: Pick<UsersService, 'availableAccountSql'> }) {
  const { uploads } = deps
  const withParticipants = prepareConversationWithParticipants(deps.users.availableAccountSql)
  const offers = createOfferSlot()

  /** The attachments of messages, as clients see them: one query, none when no message has one. */
  async function attachmentsOf(executor: Executor, ids: (string | null)[]) {
    const files = await uploads.filesByIds(executor, ids.filter((id): id is string => id !== null))
    return new Map(files.map((file) => [file.id, { id: file.id, filename: file.filename, size: file.size, mimetype: file.mimetype, url: uploads.urlOf(file) }]))
  }

  /** Messages PostgreSQL built (`MessageJson`), with their attachments: as clients see them. */
  async function fromJson(executor: Executor, messages: MessageJson[]) {
    const [attachments, offerById] = await Promise.all([attachmentsOf(executor, messages.map((message) => message.attachmentId)), offers.read(executor, messages.map((message) => message.offerId))])
    return messages.map((message) => ({
      id: message.id,
      conversationId: message.conversationId,
      senderId: message.senderId,
      content: message.content,
      attachment: (message.attachmentId ? attachments.get(message.attachmentId) : undefined) ?? null,
      offer: (message.offerId ? offerById.get(message.offerId) : undefined) ?? null,
      isRead: message.isRead,
      createdAt: message.createdAt,
    }))
  }

  /** Messages PostgreSQL built without their files and offers, given the file and the offer of each message that has one (message id to upload or offer id). */
  async function withAttachments(executor: Executor, items: Message[], fileOf: Record<string, string>, offerOf: Record<string, string> = {}) {
    const [attachments, offerById] = await Promise.all([attachmentsOf(executor, Object.values(fileOf)), offers.read(executor, Object.values(offerOf))])
    return items.map((item) => ({ ...item, attachment: attachments.get(fileOf[item.id] ?? '') ?? null, offer: offerById.get(offerOf[item.id] ?? '') ?? null }))
  }

  /** Message rows as clients see them; `readUpTo` is the other participant's last read number. */
  const toMessages = (executor: Executor, rows: MessageRow[], readUpTo: (row: MessageRow) => number) =>
    fromJson(
      executor,
      rows.map((row) => ({ id: row.id, conversationId: row.conversationId, senderId: row.senderId, content: row.content, attachmentId: row.attachmentId, offerId: row.offerId, isRead: row.seq <= readUpTo(row), createdAt: row.createdAt.toISOString() })),
    )

  /** The caller's and the other's participation in a conversation read, or 404 for anyone who is not one of them. */
  function participantsOf<Participant extends ParticipantRow>(actor: Actor, found: { conversation: ConversationRow; participants: Participant[] } | undefined) {
    const conversation = found?.conversation
    const me = found?.participants.find((participant) => participant.userId === actor.id)
    const other = found?.participants.find((participant) => participant.userId !== actor.id)
    if (!conversation || !me || !other) throw notFound('Conversation')
    return { conversation, me, other }
  }

  /** The conversation and both participants (each with whether their account can be written to), or 404 for anyone who is not one of them. */
  async function conversationFor(executor: Executor, actor: Actor, conversationId: string) {
    return participantsOf(actor, await withParticipants(executor, conversationId))
  }

  return { toMessages, fromJson, withAttachments, conversationFor, participantsOf, registerOfferReader: offers.register }
}

export type ConversationAccess = ReturnType<typeof createConversationAccess>
