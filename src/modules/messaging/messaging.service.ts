import { Type } from '@sinclair/typebox'
import type { Actor } from '../../access/access.ts'
import type { Db, Executor, Tx } from '../../db/client.ts'
import { offsetOf, type PageRequest } from '../../http/pagination.ts'
import { MINUTE, type Clock } from '../../lib/clock.ts'
import { fieldError, notFound, validationError } from '../../lib/errors.ts'
import { isUuid, newId } from '../../lib/ids.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { invalidRecipient } from './messaging.errors.ts'
import { createMessagingRepository, type ConversationCursor } from './messaging.repository.ts'
import type { ConversationRow, MessageRow, ParticipantRow } from './messaging.table.ts'

/** A recipient with no open socket is e-mailed at once, then at most once per conversation per 15 minutes (DESIGN 6). */
export const EMAIL_EVERY = 15 * MINUTE

export const MESSAGING_JOBS = {
  newMessageEmail: defineJob('mail.new_message', Type.Object({ messageId: Type.String(), recipientId: Type.String() })),
}

export interface SendMessage {
  conversationId?: string
  recipientId?: string
  content: string
}

export interface ListQuery extends PageRequest {
  cursor?: string
}

type Summary = { id: string; fullName: string; username: string; avatar: string | null }

/** The key of the direct conversation of two users: the same whoever writes first. */
const directKeyOf = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`)

const encodeCursor = (cursor: ConversationCursor) => Buffer.from(`${cursor.activityAt.getTime()}.${cursor.conversationId}`).toString('base64url')

function decodeCursor(text: string): ConversationCursor {
  const [ms, id] = Buffer.from(text, 'base64url').toString('utf8').split('.')
  const at = Number(ms)
  if (!id || !isUuid(id) || !Number.isSafeInteger(at)) throw fieldError('cursor', 'is not a cursor this list returned')
  return { activityAt: new Date(at), conversationId: id }
}

/**
 * Conversations between two users, their messages and attachments, unread counts, realtime
 * frames after commit and e-mail to recipients who are away (DESIGN 6 "Messaging").
 */
export function createMessagingService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  realtime: Pick<RealtimeHub, 'publish' | 'isOnline'>
  users: Pick<UsersService, 'findAccountById' | 'publicSummariesOf'>
  uploads: Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles' | 'filesByIds' | 'urlOf'>
}) {
  const { db, clock, outbox, mailer, realtime, users, uploads } = deps

  /** Messages as clients see them; `readUpTo` is the other participant's last read number. */
  async function toMessages(executor: Executor, rows: MessageRow[], readUpTo: (row: MessageRow) => number) {
    const files = new Map((await uploads.filesByIds(executor, rows.flatMap((row) => (row.attachmentId ? [row.attachmentId] : [])))).map((file) => [file.id, file]))
    return rows.map((row) => {
      const file = row.attachmentId ? files.get(row.attachmentId) : undefined
      return {
        id: row.id,
        conversationId: row.conversationId,
        senderId: row.senderId,
        content: row.content,
        attachment: file ? { id: file.id, filename: file.filename, size: file.size, mimetype: file.mimetype, url: uploads.urlOf(file) } : null,
        isRead: row.seq <= readUpTo(row),
        createdAt: row.createdAt.toISOString(),
      }
    })
  }

  /** The conversation and both participants, or 404 for anyone who is not one of them. */
  async function conversationFor(executor: Executor, actor: Actor, conversationId: string) {
    const repository = createMessagingRepository(executor)
    const conversation = await repository.findById(conversationId)
    const participants = conversation ? await repository.participantsOf(conversationId) : []
    const me = participants.find((participant) => participant.userId === actor.id)
    const other = participants.find((participant) => participant.userId !== actor.id)
    if (!conversation || !me || !other) throw notFound('Conversation')
    return { conversation, me, other }
  }

  /** Where a new message goes: an existing conversation of the caller's, or the direct one with a user. */
  async function resolveTarget(actor: Actor, target: { conversationId?: string; recipientId?: string }): Promise<{ conversationId?: string; recipientId: string }> {
    if (target.conversationId !== undefined && target.recipientId !== undefined) throw fieldError('recipientId', 'must not be sent with conversationId: send one of them')
    if (target.conversationId !== undefined) {
      const { other } = await conversationFor(db, actor, target.conversationId)
      return { conversationId: target.conversationId, recipientId: other.userId }
    }
    if (target.recipientId === undefined) throw validationError([{ field: 'conversationId', message: 'or recipientId is required' }])
    if (target.recipientId === actor.id) throw invalidRecipient()
    const recipient = await users.findAccountById(db, target.recipientId)
    if (!recipient?.isActive) throw notFound('User')
    const existing = await createMessagingRepository(db).findDirect(directKeyOf(actor.id, recipient.id))
    return { conversationId: existing?.id, recipientId: recipient.id }
  }

  /**
   * Writes one message: numbered under the conversation's lock, both participants' lists and
   * the recipient's unread count moved, and an e-mail job when the recipient is away and was not
   * e-mailed about this conversation in the last 15 minutes. Frames go out after commit.
   */
  async function writeMessage(tx: Tx, actor: Actor, conversationId: string, recipientId: string, message: { content: string; attachmentId: string | null }, recipientOnline: boolean) {
    const repository = createMessagingRepository(tx)
    const now = clock.now()
    await repository.lockById(conversationId)
    const seq = await repository.advanceSeq(conversationId, now)
    const row = await repository.insertMessage({ id: newId(), conversationId, seq, senderId: actor.id, content: message.content, attachmentId: message.attachmentId, createdAt: now })
    await repository.recordMessage(conversationId, actor.id, seq, now)
    if (!recipientOnline && (await repository.claimEmail(conversationId, recipientId, now, EMAIL_EVERY))) {
      await outbox.add(tx, MESSAGING_JOBS.newMessageEmail, { messageId: row.id, recipientId })
    }
    return row
  }

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

  /** Marks the conversation read for the caller and tells both participants' devices. */
  async function markRead(actor: Actor, conversation: ConversationRow) {
    const updated = await createMessagingRepository(db).markRead(conversation.id, actor.id, conversation.lastSeq)
    if (!updated) return
    const others = await createMessagingRepository(db).participantsOf(conversation.id)
    await realtime.publish(
      others.map((participant) => participant.userId),
      { type: 'read', data: { conversationId: conversation.id, userId: actor.id, readAt: clock.now().toISOString() } },
    )
  }

  return {
    /**
     * Opens the conversation of an order between its buyer and seller, in the caller's
     * transaction (order placement). Idempotent: a second call answers the same conversation.
     */
    async openOrderConversation(tx: Tx, order: { orderId: string; buyerId: string; sellerId: string }): Promise<{ id: string }> {
      if (order.buyerId === order.sellerId) throw invalidRecipient()
      const repository = createMessagingRepository(tx)
      const now = clock.now()
      const conversation = await repository.upsertConversation({ id: newId(), directKey: null, orderId: order.orderId, createdAt: now })
      await repository.insertParticipants(conversation.id, [order.buyerId, order.sellerId], now)
      return { id: conversation.id }
    },

    /** The conversation of an order, if it was opened. */
    async conversationOfOrder(executor: Executor, orderId: string): Promise<{ id: string } | undefined> {
      const row = await createMessagingRepository(executor).findByOrder(orderId)
      return row ? { id: row.id } : undefined
    },

    /** Who may see a conversation's attachments (the uploads access policy for `chat`). */
    isParticipant: (executor: Executor, conversationId: string, userId: string): Promise<boolean> => createMessagingRepository(executor).isParticipant(conversationId, userId),

    /** `POST /messages`. */
    async sendMessage(actor: Actor, request: SendMessage) {
      const target = await resolveTarget(actor, request)
      const online = await realtime.isOnline(target.recipientId)
      const row = await db.transaction(async (tx) => {
        const conversationId = target.conversationId ?? (await openDirect(tx, actor, target.recipientId))
        return writeMessage(tx, actor, conversationId, target.recipientId, { content: request.content, attachmentId: null }, online)
      })
      return deliver(row, target.recipientId)
    },

    /** `POST /messages/files`: the file becomes a message of the conversation, private to its participants. */
    async sendAttachment(actor: Actor, staged: StagedFile, fields: Record<string, string>) {
      const conversationId = fields.conversationId
      if (conversationId === undefined) throw fieldError('conversationId', 'is required')
      if (!isUuid(conversationId)) throw fieldError('conversationId', 'must be a conversation id')
      const content = fields.content ?? ''
      if (content.length > 5000) throw fieldError('content', 'must be at most 5000 characters')
      const target = await resolveTarget(actor, { conversationId })
      const online = await realtime.isOnline(target.recipientId)
      const stored = await uploads.storeFiles(actor, [staged], { objectType: 'chat', objectId: conversationId, tag: 'chat_attachment' }, 'file')
      let row: MessageRow
      try {
        row = await db.transaction(async (tx) => {
          const [file] = await uploads.recordFiles(tx, stored)
          return writeMessage(tx, actor, conversationId, target.recipientId, { content, attachmentId: file!.id }, online)
        })
      } catch (error) {
        await uploads.discardFiles(stored)
        throw error
      }
      return deliver(row, target.recipientId)
    },

    /** `GET /messages/conversations`: newest activity first, with the other participant, the last message and the unread count. */
    async listConversations(actor: Actor, query: ListQuery) {
      const repository = createMessagingRepository(db)
      const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined
      const [rows, total] = await Promise.all([repository.listConversations(actor.id, { after, offset: offsetOf(query) }, query.limit + 1), repository.countConversations(actor.id)])
      const hasMore = rows.length > query.limit
      const page = rows.slice(0, query.limit)
      const conversationIds = page.map((row) => row.conversationId)
      const [others, lastMessages] = await Promise.all([repository.othersOf(conversationIds, actor.id), repository.lastMessagesOf(page.map((row) => row.conversation))])
      const otherOf = new Map<string, ParticipantRow>(others.map((other) => [other.conversationId, other]))
      const summaries: Map<string, Summary> = await users.publicSummariesOf(
        db,
        others.map((other) => other.userId),
      )
      const messages = new Map((await toMessages(db, lastMessages, (row) => otherOf.get(row.conversationId)?.lastReadSeq ?? 0)).map((message) => [message.conversationId, message]))
      const items = page.flatMap((row) => {
        const other = otherOf.get(row.conversationId)
        const person = other ? summaries.get(other.userId) : undefined
        if (!person) return []
        const last = messages.get(row.conversationId)
        // A message the caller sent is read when the other read it; one they received, when they did.
        const lastMessage = last ? { ...last, isRead: last.senderId === actor.id ? last.isRead : row.conversation.lastSeq <= row.lastReadSeq } : null
        return [
          {
            id: row.conversationId,
            orderId: row.conversation.orderId,
            otherParticipant: person,
            lastMessage,
            unreadCount: row.unreadCount,
            lastActivityAt: row.activityAt.toISOString(),
            createdAt: row.conversation.createdAt.toISOString(),
          },
        ]
      })
      const last = page.at(-1)
      const pages = Math.ceil(total / query.limit)
      return {
        items,
        pagination: {
          page: query.cursor !== undefined ? 1 : query.page,
          limit: query.limit,
          total,
          pages,
          hasNext: hasMore,
          hasPrev: query.cursor !== undefined || query.page > 1,
          nextCursor: hasMore && last ? encodeCursor({ activityAt: last.activityAt, conversationId: last.conversationId }) : null,
        },
      }
    },

    /**
     * `GET /messages/conversations/{id}`: newest first. Messages are numbered without gaps, so
     * a page (or the page before a cursor) is a range of numbers: constant time at any depth.
     * Reading marks the conversation read.
     */
    async getConversationMessages(actor: Actor, conversationId: string, query: ListQuery) {
      const { conversation, other } = await conversationFor(db, actor, conversationId)
      const total = conversation.lastSeq
      let newest: number
      if (query.cursor !== undefined) {
        if (!/^[1-9][0-9]{0,9}$/.test(query.cursor)) throw fieldError('cursor', 'is not a cursor this list returned')
        newest = Math.min(Number(query.cursor) - 1, total)
      } else newest = total - offsetOf(query)
      const oldest = Math.max(1, newest - query.limit + 1)
      const rows = await createMessagingRepository(db).listMessages(conversationId, oldest, newest)
      const items = await toMessages(db, rows, (row) => (row.senderId === actor.id ? other.lastReadSeq : conversation.lastSeq))
      await markRead(actor, conversation)
      const page = query.cursor !== undefined ? Math.floor((total - newest) / query.limit) + 1 : query.page
      return {
        items,
        pagination: {
          page,
          limit: query.limit,
          total,
          pages: Math.ceil(total / query.limit),
          hasNext: oldest > 1 && newest >= 1,
          hasPrev: newest < total,
          nextCursor: oldest > 1 && newest >= 1 ? String(oldest) : null,
        },
      }
    },

    /** `POST /messages/conversations/{id}/read`. */
    async markConversationRead(actor: Actor, conversationId: string) {
      const { conversation } = await conversationFor(db, actor, conversationId)
      await markRead(actor, conversation)
      return { conversationId, unreadCount: 0 }
    },

    /** The e-mail job: skipped when the recipient read the message meanwhile or is no longer active. */
    async sendNewMessageEmail(job: { messageId: string; recipientId: string }): Promise<void> {
      const repository = createMessagingRepository(db)
      const message = await repository.findMessage(job.messageId)
      if (!message) return
      const [recipient, sender, participants] = await Promise.all([users.findAccountById(db, job.recipientId), users.findAccountById(db, message.senderId), repository.participantsOf(message.conversationId)])
      const reader = participants.find((participant) => participant.userId === job.recipientId)
      if (!recipient?.isActive || !sender || !reader || reader.lastReadSeq >= message.seq) return
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

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

export type MessagingService = ReturnType<typeof createMessagingService>
