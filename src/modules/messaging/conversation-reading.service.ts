import { isUnchecked, type Actor, type Caller } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import { JsonText } from '../../db/json-sql.ts'
import { offsetOf, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { SessionCheck } from '../auth/auth.module.ts'
import type { UsersService, UserSummary } from '../users/users.module.ts'
import type { ConversationAccess } from './conversation-access.service.ts'
import { createMessagingRepository, prepareConversationPage, type ConversationCursor } from './messaging.repository.ts'
import type { MessagePage } from './messaging.schemas.ts'
import type { ConversationRow, ParticipantRow } from './messaging.table.ts'

export interface ListQuery extends PageRequest {
  cursor?: string
}


const encodeCursor = (cursor: ConversationCursor) => Buffer.from(`${cursor.activityAt.getTime()}.${cursor.conversationId}`).toString('base64url')

function decodeCursor(text: string): ConversationCursor {
  const [ms, id] = Buffer.from(text, 'base64url').toString('utf8').split('.')
  const at = Number(ms)
  if (!id || !isUuid(id) || !Number.isSafeInteger(at)) throw fieldError('cursor', 'is not a cursor this list returned')
  return { activityAt: new Date(at), conversationId: id }
}

/** A row of the caller's conversation list, with its conversation. */
type ListedConversation = ParticipantRow & { conversation: ConversationRow }

/** A message as clients see it. */
type ClientMessage = Awaited<ReturnType<ConversationAccess['toMessages']>>[number]

/** The list's items: each conversation with its other participant (one without a public summary is left out) and its last message. */
function conversationItems(actorId: string, page: ListedConversation[], otherOf: Map<string, ParticipantRow>, summaries: Map<string, UserSummary>, messages: Map<string, ClientMessage>) {
  return page.flatMap((row) => {
    const other = otherOf.get(row.conversationId)
    const person = other ? summaries.get(other.userId) : undefined
    if (!person) return []
    const last = messages.get(row.conversationId)
    // A message the caller sent is read when the other read it; one they received, when they did.
    const lastMessage = last ? { ...last, isRead: last.senderId === actorId ? last.isRead : row.conversation.lastSeq <= row.lastReadSeq } : null
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
}

/** The conversation list's pagination: by page, or by cursor (then always page 1). */
function conversationListPagination(query: ListQuery, total: number, hasMore: boolean, last: ListedConversation | undefined) {
  return {
    page: query.cursor !== undefined ? 1 : query.page,
    limit: query.limit,
    total,
    pages: Math.ceil(total / query.limit),
    hasNext: hasMore,
    hasPrev: query.cursor !== undefined || query.page > 1,
    nextCursor: hasMore && last ? encodeCursor({ activityAt: last.activityAt, conversationId: last.conversationId }) : null,
  }
}

/** A message page's pagination: the page a cursor lands on follows from the numbers, which have no gaps. */
function messagePagination(query: ListQuery, total: number, newest: number, oldest: number) {
  return {
    page: query.cursor !== undefined ? Math.floor((total - newest) / query.limit) + 1 : query.page,
    limit: query.limit,
    total,
    pages: Math.ceil(total / query.limit),
    hasNext: oldest > 1 && newest >= 1,
    hasPrev: newest < total,
    nextCursor: oldest > 1 && newest >= 1 ? String(oldest) : null,
  }
}

/** Reading: the conversation list, a conversation's messages (keyset pages, decision 0051), read marks and receipts. */
export function createConversationReading(deps: {
  db: Db
  clock: Clock
  realtime: Pick<RealtimeHub, 'publish'>
  users: Pick<UsersService, 'publicSummariesOf'>
  access: ConversationAccess
  sessions: SessionCheck
}) {
  const { db, clock, realtime, users, sessions } = deps
  const readConversationPage = prepareConversationPage(sessions.sql)
  const { toMessages, withAttachments, conversationFor, participantsOf } = deps.access

  /** Marks the conversation read for the caller and tells both participants' devices. */
  async function markRead(actor: Actor, conversation: ConversationRow, me: ParticipantRow, otherId: string) {
    // Already read (the usual case when a conversation is reopened): no write at all.
    if (me.lastReadSeq >= conversation.lastSeq && me.unreadCount === 0) return
    const updated = await createMessagingRepository(db).markRead(conversation.id, actor.id, conversation.lastSeq)
    if (!updated) return
    await realtime.publish(
      [actor.id, otherId],
      { type: 'read', data: { conversationId: conversation.id, userId: actor.id, readAt: clock.now().toISOString() } },
    )
  }

  return {
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
      const summaries: Map<string, UserSummary> = await users.publicSummariesOf(
        db,
        others.map((other) => other.userId),
      )
      const messages = new Map((await toMessages(db, lastMessages, (row) => otherOf.get(row.conversationId)?.lastReadSeq ?? 0)).map((message) => [message.conversationId, message]))
      return { items: conversationItems(actor.id, page, otherOf, summaries, messages), pagination: conversationListPagination(query, total, hasMore, page.at(-1)) }
    },

    /**
     * `GET /messages/conversations/{id}`: newest first. Messages are numbered without gaps, so
     * a page (or the page before a cursor) is a range of numbers: constant time at any depth.
     * Reading marks the conversation read. An unchecked caller's session is read with the page
     * and confirmed before anything is answered or marked.
     */
    async getConversationMessages(caller: Caller, conversationId: string, query: ListQuery) {
      let before: number | null = null
      if (query.cursor !== undefined) {
        if (!/^[1-9][0-9]{0,9}$/.test(query.cursor)) throw fieldError('cursor', 'is not a cursor this list returned')
        before = Number(query.cursor)
      }
      const userId = isUnchecked(caller) ? caller.claims.sub : caller.id
      const read = await readConversationPage(db, { id: conversationId, userId, before, offset: before === null ? offsetOf(query) : 0, limit: query.limit, ...sessions.params(caller) })
      const actor = await sessions.actorOf(caller, read.session)
      const found = read.found
      const { conversation, me, other } = participantsOf(actor, found)
      const { newest, oldest, items, attachments, offers } = found!
      const total = conversation.lastSeq
      await markRead(actor, conversation, me, other.userId)
      const pagination = messagePagination(query, total, newest, oldest)
      // A page without files is sent as PostgreSQL wrote it; a file's signed URL is made here.
      if (attachments === null && offers === null) return new JsonText<MessagePage>(`{"items":${items.text},"pagination":${JSON.stringify(pagination)}}`)
      return { items: await withAttachments(db, items.parse(), attachments ?? {}, offers ?? {}), pagination }
    },

    /** `POST /messages/conversations/{id}/read`. */
    async markConversationRead(actor: Actor, conversationId: string) {
      const { conversation, me, other } = await conversationFor(db, actor, conversationId)
      await markRead(actor, conversation, me, other.userId)
      return { conversationId, unreadCount: 0 }
    },

  }
}
