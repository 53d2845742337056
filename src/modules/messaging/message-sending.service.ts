import type { Actor } from '../../access/access.ts'
import type { Db, Executor, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, notFound, validationError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { AccountStanding, UsersService } from '../users/users.module.ts'
import type { ConversationAccess } from './conversation-access.service.ts'
import { EMAIL_EVERY, MESSAGING_JOBS } from './message-emails.service.ts'
import { invalidRecipient, recipientUnavailable } from './messaging.errors.ts'
import { createMessagingRepository, orderConversationCtes, orderConversationValues, prepareDirectStatements, sendMessageAtOnce } from './messaging.repository.ts'
import type { MessageRow } from './messaging.table.ts'

export interface SendMessage {
  conversationId?: string
  recipientId?: string
  content: string
}

/** How much of a message its notification shows. */
const PREVIEW_LENGTH = 140

/** The key of the direct conversation of two users: the same whoever writes first. */
const directKeyOf = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`)

/** What the sending use cases use. */
interface MessageSendingDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  realtime: Pick<RealtimeHub, 'publish' | 'isOnline'>
  users: Pick<UsersService, 'accountStandingSql'>
  uploads: Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles'>
  access: ConversationAccess
  notifications: Pick<NotificationsService, 'notify'>
}

type DirectStatements = ReturnType<typeof prepareDirectStatements>

/** Where a new message goes: an existing conversation of the caller's, or the direct one with a user. */
async function resolveTarget(deps: Pick<MessageSendingDeps, 'db' | 'access'>, direct: DirectStatements, actor: Actor, target: { conversationId?: string; recipientId?: string }): Promise<{ conversationId?: string; recipientId: string }> {
  if (target.conversationId !== undefined && target.recipientId !== undefined) throw fieldError('recipientId', 'must not be sent with conversationId: send one of them')
  if (target.conversationId !== undefined) {
    const { other } = await deps.access.conversationFor(deps.db, actor, target.conversationId)
    if (!other.available) throw recipientUnavailable()
    return { conversationId: target.conversationId, recipientId: other.userId }
  }
  if (target.recipientId === undefined) throw validationError([{ field: 'conversationId', message: 'or recipientId is required' }])
  if (target.recipientId === actor.id) throw invalidRecipient()
  const found = await direct.find(deps.db, { recipientId: target.recipientId, directKey: directKeyOf(actor.id, target.recipientId) })
  assertStanding(found.standing)
  return { conversationId: found.conversationId, recipientId: target.recipientId }
}

/**
 * A recipient that can be written to, or the refusal: an account never activated has no public
 * existence yet (as unknown as a wrong id); one that staff suspended or deactivated exists, but
 * nobody would read the message.
 */
function assertStanding(standing: AccountStanding): void {
  if (standing === 'unknown') throw notFound('User')
  if (standing === 'unavailable') throw recipientUnavailable()
}

/**
 * Writes one message: numbered under the conversation's lock, both participants' lists and
 * the recipient's unread count moved, and, when the recipient is away and was not e-mailed about
 * this conversation in the last 15 minutes, a notification and an e-mail job. Frames go out after commit.
 */
async function writeMessage(deps: Pick<MessageSendingDeps, 'clock' | 'outbox' | 'notifications'>, tx: Tx, senderId: string, conversationId: string, recipientId: string, message: { content: string; attachmentId: string | null; offerId?: string }, recipientOnline: boolean) {
  const repository = createMessagingRepository(tx)
  const now = deps.clock.now()
  // The UPDATE takes the conversation's row lock: messages of one conversation are numbered one at a time.
  const seq = await repository.advanceSeq(conversationId, now)
  const row = await repository.insertMessage({ id: newId(), conversationId, seq, senderId, content: message.content, attachmentId: message.attachmentId, offerId: message.offerId ?? null, createdAt: now })
  await repository.recordMessage(conversationId, senderId, seq, now)
  if (!recipientOnline && (await repository.claimEmail(conversationId, recipientId, now, EMAIL_EVERY))) {
    const preview = message.content.length > PREVIEW_LENGTH ? `${message.content.slice(0, PREVIEW_LENGTH)}…` : message.content
    await deps.notifications.notify(tx, { userId: recipientId, kind: 'message.received', link: { type: 'conversation', id: conversationId }, data: { conversationId, messageId: row.id, senderId, preview } })
    await deps.outbox.add(tx, MESSAGING_JOBS.newMessageEmail, { messageId: row.id, recipientId })
  }
  return row
}

/** Writing: opening conversations (direct and per order), messages and files, frames after commit. */
export function createMessageSending(deps: MessageSendingDeps) {
  const { db, clock, realtime, uploads } = deps
  const { toMessages } = deps.access
  const direct = prepareDirectStatements(deps.users.accountStandingSql)

  async function deliver(row: MessageRow, recipientId: string) {
    const [message] = await toMessages(db, [row], () => 0)
    await realtime.publish([row.senderId, recipientId], { type: 'message', data: message })
    return message!
  }

  async function openDirect(tx: Tx, actor: Actor, recipientId: string): Promise<string> {
    const repository = createMessagingRepository(tx)
    const now = clock.now()
    const conversation = await repository.upsertConversation({ id: newId(), directKey: directKeyOf(actor.id, recipientId), orderId: null, createdAt: now })
    await repository.insertParticipants(conversation.id, [actor.id, recipientId], now)
    return conversation.id
  }

  return {
    /** For order placement: the CTEs that open the order's conversation in the placing statement, and their values. */
    orderConversationCtes,
    orderConversationValues,

    /** For order answers: the conversation of each of these orders, by order id (one query for a page of orders). */
    async conversationsOfOrders(executor: Executor, orderIds: string[]): Promise<Map<string, string>> {
      const rows = await createMessagingRepository(executor).findByOrders(orderIds)
      return new Map(rows.map((row) => [row.orderId!, row.id]))
    },

    /** Whether the user has a socket open on any instance; read before a transaction that writes a message. */
    isOnline: (userId: string): Promise<boolean> => realtime.isOnline(userId),

    /**
     * For the orders module: a party's note on a move of their order (a revision request's note, a
     * dispute's reason), written as their message in the order's conversation within the move's
     * transaction, so the note exists if and only if the move does. Whether the recipient is
     * available does not matter here: the move is the order's business. Push it with
     * `publishMessage` after the commit.
     */
    async writeOrderNote(tx: Tx, note: { orderId: string; senderId: string; recipientId: string; content: string; recipientOnline: boolean }): Promise<MessageRow> {
      // Placing an order opens its conversation in the same statement (migration 0021 opened those of older orders).
      const conversation = await createMessagingRepository(tx).findByOrder(note.orderId)
      if (!conversation) throw new Error(`order ${note.orderId} has no conversation`)
      return writeMessage(deps, tx, note.senderId, conversation.id, note.recipientId, { content: note.content, attachmentId: null }, note.recipientOnline)
    },

    /**
     * For the offers module: the message that presents a custom offer in its direct conversation,
     * written in the transaction that creates the offer. Push it with `publishMessage` after the commit.
     */
    writeOfferMessage: (tx: Tx, message: { conversationId: string; senderId: string; recipientId: string; content: string; offerId: string; recipientOnline: boolean }): Promise<MessageRow> =>
      writeMessage(deps, tx, message.senderId, message.conversationId, message.recipientId, { content: message.content, attachmentId: null, offerId: message.offerId }, message.recipientOnline),

    /** Pushes a message written in a transaction to both participants' sockets, once that transaction committed. */
    publishMessage: (row: MessageRow, recipientId: string) => deliver(row, recipientId).then(() => undefined),

    /** `POST /messages`. */
    async sendMessage(actor: Actor, given: SendMessage) {
      // Ids are accepted in either case; stored, keyed and pushed to in lower case.
      const request = { ...given, recipientId: given.recipientId?.toLowerCase() }
      const to = request.conversationId === undefined && request.recipientId !== undefined && request.recipientId !== actor.id ? request.recipientId : undefined
      const toOnline = to !== undefined ? await realtime.isOnline(to) : undefined
      let target: { conversationId?: string; recipientId: string }
      // A message to a user online, in a direct conversation already open: checked and written in one statement.
      if (to !== undefined && toOnline) {
        const sent = await direct.sendAtOnce(db, { id: newId(), directKey: directKeyOf(actor.id, to), recipientId: to, senderId: actor.id, content: request.content, at: clock.now() })
        assertStanding(sent.standing)
        if (sent.row) return deliver(sent.row, to)
        // They can be written to and have no conversation yet: it is opened below (an upsert, should it appear meanwhile).
        target = { recipientId: to }
      } else {
        target = await resolveTarget(deps, direct, actor, request)
      }
      const online = toOnline ?? (await realtime.isOnline(target.recipientId))
      // A reply in an open conversation to someone online: one statement.
      if (target.conversationId !== undefined && online) {
        const row = await sendMessageAtOnce(db, { id: newId(), conversationId: target.conversationId, senderId: actor.id, content: request.content, at: clock.now() })
        if (!row) throw notFound('Conversation')
        return deliver(row, target.recipientId)
      }
      const row = await db.transaction(async (tx) => {
        const conversationId = target.conversationId ?? (await openDirect(tx, actor, target.recipientId))
        return writeMessage(deps, tx, actor.id, conversationId, target.recipientId, { content: request.content, attachmentId: null }, online)
      })
      return deliver(row, target.recipientId)
    },

    /** `POST /messages/files`: the file becomes a message of the conversation, private to its participants. */
    async sendAttachment(actor: Actor, staged: StagedFile, fields: { conversationId: string; content?: string }) {
      const { conversationId, content = '' } = fields
      const target = await resolveTarget(deps, direct, actor, { conversationId })
      const online = await realtime.isOnline(target.recipientId)
      const stored = await uploads.storeFiles(actor, [staged], { objectType: 'chat', objectId: conversationId, tag: 'chat_attachment' }, 'file')
      let row: MessageRow
      try {
        row = await db.transaction(async (tx) => {
          const [file] = await uploads.recordFiles(tx, stored)
          return writeMessage(deps, tx, actor.id, conversationId, target.recipientId, { content, attachmentId: file!.id }, online)
        })
      } catch (error) {
        await uploads.discardFiles(stored)
        throw error
      }
      return deliver(row, target.recipientId)
    },
  }
}
