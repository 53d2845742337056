import { and, asc, between, count, desc, eq, gt, inArray, lt, lte, ne, or, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { afterDescending } from '../../db/keyset.ts'
import { placeholdersOf, type TableRelation } from '../../db/fragments.ts'
import { JsonText, jsonObjectSql } from '../../db/json-sql.ts'
import { rowFromJson } from '../../db/json-rows.ts'
import { prepared, preparedSql } from '../../db/statements.ts'
import { newId } from '../../lib/ids.ts'
import type { SessionParams } from '../auth/auth.module.ts'
import type { AccountStanding } from '../users/users.module.ts'
import { Message } from './messaging.schemas.ts'
import { conversationParticipants, conversations, messages, type ConversationRow, type MessageRow, type ParticipantRow } from './messaging.table.ts'

/** The new order an order's conversation is opened for: the orders module's relation (a CTE of the placement) with the columns read here. */
export type PlacedOrder = TableRelation<'id' | 'buyerId' | 'sellerId' | 'createdAt'>

/** The placeholders of `orderConversationCtes`, filled by `orderConversationValues`. */
export interface OrderConversationValues {
  orderConversationId: string
}

/**
 * For the orders module's one-statement placement, two CTEs: when the relation `placed` (the new
 * order) has a row, the order's conversation and its two participants, so the conversation exists
 * if and only if the order does.
 */
export function orderConversationCtes(placed: PlacedOrder) {
  const p = placeholdersOf<OrderConversationValues>()
  const order = placed.columns
  return sql`order_conversation as (
    insert into ${conversations} (id, order_id, created_at)
    select ${p('orderConversationId')}::uuid, ${order.id}, ${order.createdAt} from ${placed.name}
    returning id, created_at
  ),
  order_participants as (
    insert into ${conversationParticipants} (conversation_id, user_id, activity_at)
    select c.id, parties.user_id, c.created_at
    from order_conversation c cross join (select ${order.buyerId} as user_id from ${placed.name} union all select ${order.sellerId} from ${placed.name}) parties
  )`
}

export const orderConversationValues = (): OrderConversationValues => ({ orderConversationId: newId() })

/** A position in a user's conversation list: the conversation's activity time, then its id. */
export interface ConversationCursor {
  activityAt: Date
  conversationId: string
}

/** Which messages a page holds: the newest `limit` before `before` (a cursor), or after skipping `offset` of the newest. */
export interface MessageWindow {
  before: number | null
  offset: number
  limit: number
}

/** A message as clients see it, built by PostgreSQL; the attachment's file is looked up by id (its URL is signed in Node). */
export interface MessageJson {
  id: string
  conversationId: string
  senderId: string
  content: string
  attachmentId: string | null
  offerId: string | null
  isRead: boolean
  /** ISO 8601 UTC, milliseconds, as the API writes timestamps. */
  createdAt: string
}

/** The placeholders of a conversation page: which conversation, for whom, which window, and the session's (auth's fragment). */
export type ConversationPageValues = { id: string; userId: string } & MessageWindow & SessionParams

/**
 * A conversation, its participants and one page of its messages in one statement, with the
 * caller's session when the route checks it here (auth's fragment `sessionSql`). Messages are
 * numbered without gaps, so the page is a range of numbers computed from the conversation's last
 * number: constant time at any depth. Whether a message is read is decided for the reader
 * `userId`: one they sent, when the other has read up to it; one they received, always (reading
 * marks the conversation read).
 */
export function prepareConversationPage<Session>(sessionSql: SQL<Session | null>) {
  const p = placeholdersOf<ConversationPageValues>()
  const statement = preparedSql<
    ConversationPageValues,
    {
      session: Session | null
      conversation: Record<string, unknown> | null
      participants: Record<string, unknown>[] | null
      items: string | null
      attachments: Record<string, string> | null
      offers: Record<string, string> | null
      newest: number
      oldest: number
    }
  >(
    'messaging_conversation_page',
    sql`with c as (select * from ${conversations} where id = ${p('id')}::uuid),
      participants as (select p.* from ${conversationParticipants} p join c on c.id = p.conversation_id),
      bounds as (
        select newest, greatest(1, newest - ${p('limit')}::int + 1)::int as oldest from (
          select (case when ${p('before')}::bigint is null then c.last_seq - ${p('offset')}::int
            else least(${p('before')}::bigint - 1, c.last_seq) end)::int as newest from c) as page),
      page as (
        select row_to_json(c) as conversation, bounds.newest, bounds.oldest,
          (select json_agg(row_to_json(participants)) from participants) as participants,
          coalesce((select json_agg(${jsonObjectSql(Message, {
            id: sql`m.id`,
            conversationId: sql`m.conversation_id`,
            senderId: sql`m.sender_id`,
            content: sql`m.content`,
            attachment: sql`null`,
            offer: sql`null`,
            isRead: sql`m.seq <= case when m.sender_id = ${p('userId')}::uuid
              then coalesce((select last_read_seq from participants where user_id <> ${p('userId')}::uuid), 0) else c.last_seq end`,
            createdAt: sql`to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
          })} order by m.seq desc)
            from ${messages} m where m.conversation_id = c.id and m.seq between bounds.oldest and bounds.newest), '[]'::json)::text as items,
          (select json_object_agg(m.id, m.attachment_id) from ${messages} m
            where m.conversation_id = c.id and m.seq between bounds.oldest and bounds.newest and m.attachment_id is not null) as attachments,
          (select json_object_agg(m.id, m.offer_id) from ${messages} m
            where m.conversation_id = c.id and m.seq between bounds.oldest and bounds.newest and m.offer_id is not null) as offers
        from c cross join bounds)
      select ${sessionSql} as session, page.* from (select 1) as one left join page on true`,
  )
  /** The session as read, and the page with the conversation and participants decoded into rows (`undefined` for an unknown conversation). */
  return async (executor: Executor, params: ConversationPageValues) => {
    const [row] = await statement(executor, params)
    const found = row?.conversation
      ? {
          conversation: rowFromJson(conversations, row.conversation),
          participants: (row.participants ?? []).map((json) => rowFromJson(conversationParticipants, json)),
          items: new JsonText<Message[]>(row.items ?? '[]'),
          attachments: row.attachments,
          offers: row.offers,
          newest: row.newest,
          oldest: row.oldest,
        }
      : undefined
    return { session: row?.session ?? null, found }
  }
}

/** A participant, and whether their account can be written to now. */
export type ParticipantWithState = ParticipantRow & { available: boolean }

/**
 * The conversation with its participants, each with whether their account can be written to
 * (the users module's fragment `available`), in one statement: a send learns who the recipient is
 * and whether they may receive it in the round trip it already made.
 */
export function prepareConversationWithParticipants(available: (userId: AnyColumn) => SQL<boolean>) {
  const statement = prepared('messaging_conversation_with_participants', (db) =>
    db
      .select({ conversation: conversations, participant: conversationParticipants, available: available(conversationParticipants.userId) })
      .from(conversations)
      .innerJoin(conversationParticipants, eq(conversationParticipants.conversationId, conversations.id))
      .where(eq(conversations.id, sql.placeholder('id'))),
  )
  return async (executor: Executor, id: string): Promise<{ conversation: ConversationRow; participants: ParticipantWithState[] } | undefined> => {
    const rows = await statement(executor, { id })
    const first = rows[0]
    return first ? { conversation: first.conversation, participants: rows.map((row) => ({ ...row.participant, available: row.available })) } : undefined
  }
}

/**
 * The CTEs that write a text message to the conversation `conversationId` (an expression; no row
 * is written when it is null): the next number under the conversation's row lock (`seq`), the
 * message (`inserted`), and both participants' lists and counters, as `advanceSeq`,
 * `insertMessage` and `recordMessage` do in a transaction. Each part computes from the row
 * version its lock waited for, so concurrent messages of one conversation are numbered one after
 * another. For a recipient who is online: there is no e-mail to weigh.
 */
const writeMessageCtes = (conversationId: SQL) => sql`seq as (
      update ${conversations} set last_seq = last_seq + 1, last_message_at = ${sql.placeholder('at')}::timestamptz
      where id = ${conversationId} returning id, last_seq),
    inserted as (
      insert into ${messages} (id, conversation_id, seq, sender_id, content, attachment_id, created_at)
      select ${sql.placeholder('id')}::uuid, seq.id, seq.last_seq, ${sql.placeholder('senderId')}::uuid, ${sql.placeholder('content')}::text, null, ${sql.placeholder('at')}::timestamptz from seq
      returning *),
    recorded as (
      update ${conversationParticipants} p set activity_at = ${sql.placeholder('at')}::timestamptz,
        unread_count = case when p.user_id = ${sql.placeholder('senderId')}::uuid then 0 else p.unread_count + 1 end,
        last_read_seq = case when p.user_id = ${sql.placeholder('senderId')}::uuid then seq.last_seq else p.last_read_seq end
      from seq where p.conversation_id = seq.id
      returning p.user_id)`

interface MessageToWrite {
  id: string
  senderId: string
  content: string
  at: Date
}

/** A text message to a conversation whose recipient is online, written in one statement. */
const sendAtOnce = preparedSql<MessageToWrite & { conversationId: string }, { message: Record<string, unknown> }>(
  'messaging_send_at_once',
  sql`with ${writeMessageCtes(sql`${sql.placeholder('conversationId')}::uuid`)}
    select row_to_json(inserted) as message from inserted`,
)

/** `sendAtOnce`: the new message's row, or `undefined` when the conversation is gone. */
export async function sendMessageAtOnce(executor: Executor, message: MessageToWrite & { conversationId: string }): Promise<MessageRow | undefined> {
  const [row] = await sendAtOnce(executor, message)
  return row ? rowFromJson(messages, row.message) : undefined
}

/** A user written to directly, and the direct conversation of the two (`directKey`, either way round). */
interface DirectTarget {
  recipientId: string
  directKey: string
}

/**
 * The statements of a message to a user (`recipientId`): both read the recipient's standing
 * through the users module's fragment, the one place that says who can be written to.
 *
 * - `find`: the standing and the direct conversation's id, if the two have one.
 * - `sendAtOnce`, for a recipient who is online: the same, and, when they can be written to and
 *   the conversation exists, the message written as `sendAtOnce` writes it, in one statement.
 *   Without the conversation nothing is written: the caller opens it in a transaction.
 */
export function prepareDirectStatements(standingOf: (userId: SQL) => SQL<AccountStanding>) {
  const standing = standingOf(sql`${sql.placeholder('recipientId')}::uuid`)
  const directId = sql`select c.id from ${conversations} c where c.direct_key = ${sql.placeholder('directKey')}::text`
  const find = preparedSql<DirectTarget, { standing: AccountStanding; conversationId: string | null }>(
    'messaging_direct_target',
    sql`select ${standing} as standing, (${directId}) as "conversationId"`,
  )
  const send = preparedSql<MessageToWrite & DirectTarget, { standing: AccountStanding; message: Record<string, unknown> | null }>(
    'messaging_send_direct_at_once',
    sql`with recipient as (select ${standing} as standing),
      direct as (${directId} and (select standing from recipient) = 'available'),
      ${writeMessageCtes(sql`(select id from direct)`)}
      select recipient.standing, (select row_to_json(inserted) from inserted) as message from recipient`,
  )
  return {
    async find(executor: Executor, target: DirectTarget): Promise<{ standing: AccountStanding; conversationId?: string }> {
      const [row] = await find(executor, target)
      return { standing: row!.standing, conversationId: row!.conversationId ?? undefined }
    },
    async sendAtOnce(executor: Executor, message: MessageToWrite & DirectTarget): Promise<{ standing: AccountStanding; row?: MessageRow }> {
      const [row] = await send(executor, message)
      return { standing: row!.standing, row: row!.message ? rowFromJson(messages, row!.message) : undefined }
    },
  }
}

/** Conversations and their participants: opening them, finding them, and a user's list. */
function createConversationsRepository(db: Executor) {
  return {
    /** Inserts the conversation unless its key (pair or order) exists; answers the row either way. */
    async upsertConversation(row: Pick<ConversationRow, 'id' | 'directKey' | 'orderId' | 'createdAt'>): Promise<ConversationRow> {
      const [inserted] = await db.insert(conversations).values(row).onConflictDoNothing().returning()
      if (inserted) return inserted
      const key = row.orderId !== null ? eq(conversations.orderId, row.orderId) : eq(conversations.directKey, row.directKey!)
      const [existing] = await db.select().from(conversations).where(key)
      return existing!
    },

    async insertParticipants(conversationId: string, userIds: string[], activityAt: Date): Promise<void> {
      await db
        .insert(conversationParticipants)
        .values(userIds.map((userId) => ({ conversationId, userId, activityAt })))
        .onConflictDoNothing()
    },

    async findByOrder(orderId: string): Promise<ConversationRow | undefined> {
      const [row] = await db.select().from(conversations).where(eq(conversations.orderId, orderId))
      return row
    },

    /** The conversations of these orders (those that have one). */
    findByOrders(orderIds: string[]): Promise<ConversationRow[]> {
      if (orderIds.length === 0) return Promise.resolve([])
      return db.select().from(conversations).where(inArray(conversations.orderId, orderIds))
    },

    async findById(id: string): Promise<ConversationRow | undefined> {
      const [row] = await db.select().from(conversations).where(eq(conversations.id, id))
      return row
    },

    async participantsOf(conversationId: string): Promise<ParticipantRow[]> {
      return db.select().from(conversationParticipants).where(eq(conversationParticipants.conversationId, conversationId))
    },

    async isParticipant(conversationId: string, userId: string): Promise<boolean> {
      const [row] = await db
        .select({ userId: conversationParticipants.userId })
        .from(conversationParticipants)
        .where(and(eq(conversationParticipants.conversationId, conversationId), eq(conversationParticipants.userId, userId)))
      return row !== undefined
    },

    /** The user's conversations, newest activity first, after a cursor or from an offset. */
    listConversations(userId: string, position: { after?: ConversationCursor; offset: number }, limit: number): Promise<(ParticipantRow & { conversation: ConversationRow })[]> {
      const after = position.after
        ? afterDescending(conversationParticipants.activityAt, position.after.activityAt, conversationParticipants.conversationId, position.after.conversationId)
        : undefined
      return db
        .select()
        .from(conversationParticipants)
        .innerJoin(conversations, eq(conversations.id, conversationParticipants.conversationId))
        .where(and(eq(conversationParticipants.userId, userId), after))
        .orderBy(desc(conversationParticipants.activityAt), desc(conversationParticipants.conversationId))
        .offset(position.after ? 0 : position.offset)
        .limit(limit)
        .then((rows) => rows.map((row) => ({ ...row.conversation_participants, conversation: row.conversations })))
    },

    async countConversations(userId: string): Promise<number> {
      const [row] = await db.select({ total: count() }).from(conversationParticipants).where(eq(conversationParticipants.userId, userId))
      return row?.total ?? 0
    },

    /** The other participant of each conversation, for a list. */
    async othersOf(conversationIds: string[], userId: string): Promise<ParticipantRow[]> {
      if (conversationIds.length === 0) return []
      return db
        .select()
        .from(conversationParticipants)
        .where(and(inArray(conversationParticipants.conversationId, conversationIds), ne(conversationParticipants.userId, userId)))
    },
  }
}

/** Messages: numbering and writing them, read marks, the e-mail claim, and reading them back. */
function createMessagesRepository(db: Executor) {
  return {
    /** Takes the next message number under the conversation's row lock (held until commit). */
    async advanceSeq(id: string, at: Date): Promise<number> {
      const [row] = await db
        .update(conversations)
        .set({ lastSeq: sql`${conversations.lastSeq} + 1`, lastMessageAt: at })
        .where(eq(conversations.id, id))
        .returning({ lastSeq: conversations.lastSeq })
      return row!.lastSeq
    },

    async insertMessage(row: MessageRow): Promise<MessageRow> {
      const [inserted] = await db.insert(messages).values(row).returning()
      return inserted!
    },

    /** After a message: both lists move it to the top; the recipient has one more unread. */
    async recordMessage(conversationId: string, senderId: string, seq: number, at: Date): Promise<void> {
      await db
        .update(conversationParticipants)
        .set({
          activityAt: at,
          unreadCount: sql`case when ${conversationParticipants.userId} = ${senderId} then 0 else ${conversationParticipants.unreadCount} + 1 end`,
          // Writing is reading: the sender has seen everything up to their own message.
          lastReadSeq: sql`case when ${conversationParticipants.userId} = ${senderId} then ${seq} else ${conversationParticipants.lastReadSeq} end`,
        })
        .where(eq(conversationParticipants.conversationId, conversationId))
    },

    /** Marks read up to `seq`; answers the row when something changed. */
    async markRead(conversationId: string, userId: string, seq: number): Promise<ParticipantRow | undefined> {
      const [row] = await db
        .update(conversationParticipants)
        .set({ lastReadSeq: seq, unreadCount: 0 })
        .where(and(eq(conversationParticipants.conversationId, conversationId), eq(conversationParticipants.userId, userId), or(lt(conversationParticipants.lastReadSeq, seq), gt(conversationParticipants.unreadCount, 0))))
        .returning()
      return row
    },

    /**
     * Claims the right to e-mail a participant about the conversation: at most once per `every`
     * (the first message at once). Answers whether this caller got it.
     */
    async claimEmail(conversationId: string, userId: string, now: Date, every: number): Promise<boolean> {
      const cutoff = new Date(now.getTime() - every)
      const rows = await db
        .update(conversationParticipants)
        .set({ lastEmailedAt: now })
        .where(
          and(
            eq(conversationParticipants.conversationId, conversationId),
            eq(conversationParticipants.userId, userId),
            or(sql`${conversationParticipants.lastEmailedAt} is null`, lte(conversationParticipants.lastEmailedAt, cutoff)),
          ),
        )
        .returning({ userId: conversationParticipants.userId })
      return rows.length > 0
    },

    async findMessage(id: string): Promise<MessageRow | undefined> {
      const [row] = await db.select().from(messages).where(eq(messages.id, id))
      return row
    },

    /** Messages numbered `oldest` to `newest` of a conversation, newest first (a page is a range of numbers). */
    messagesBetween(conversationId: string, oldest: number, newest: number): Promise<MessageRow[]> {
      return db
        .select()
        .from(messages)
        .where(and(eq(messages.conversationId, conversationId), between(messages.seq, oldest, newest)))
        .orderBy(desc(messages.seq))
    },

    /** The newest message of each conversation (by its number), for a list. */
    async lastMessagesOf(rows: { id: string; lastSeq: number }[]): Promise<MessageRow[]> {
      const wanted = rows.filter((row) => row.lastSeq > 0)
      if (wanted.length === 0) return []
      return db
        .select()
        .from(messages)
        .where(or(...wanted.map((row) => and(eq(messages.conversationId, row.id), eq(messages.seq, row.lastSeq)))))
        .orderBy(asc(messages.conversationId))
    },
  }
}

export function createMessagingRepository(db: Executor) {
  return { ...createConversationsRepository(db), ...createMessagesRepository(db) }
}

export type MessagingRepository = ReturnType<typeof createMessagingRepository>
