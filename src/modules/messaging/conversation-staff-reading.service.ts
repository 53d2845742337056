import type { Db } from '../../db/client.ts'
import { offsetOf } from '../../http/pagination.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import type { ConversationAccess } from './conversation-access.service.ts'
import type { ListQuery } from './conversation-reading.service.ts'
import { createMessagingRepository } from './messaging.repository.ts'
import type { MessagePage } from './messaging.schemas.ts'

/**
 * Staff reading an order's conversation (decision 0187): read-only, so nothing is marked read and
 * nobody is told; a message reads `isRead` as its recipient left it. Direct conversations are
 * never open to staff: only the conversation of an order, which a dispute may need.
 */
export function createStaffConversationReading(deps: { db: Db; access: ConversationAccess }) {
  const { db, access } = deps

  return {
    /** `GET /admin/orders/{orderId}/messages` (view_orders): newest first, paged like a participant's read. */
    async orderMessagesForStaff(orderId: string, query: ListQuery): Promise<MessagePage> {
      let before: number | null = null
      if (query.cursor !== undefined) {
        if (!/^[1-9][0-9]{0,9}$/.test(query.cursor)) throw fieldError('cursor', 'is not a cursor this list returned')
        before = Number(query.cursor)
      }
      const repository = createMessagingRepository(db)
      const conversation = await repository.findByOrder(orderId)
      if (!conversation) throw notFound('Order')
      const total = conversation.lastSeq
      const newest = before === null ? total - offsetOf(query) : Math.min(before - 1, total)
      const oldest = Math.max(1, newest - query.limit + 1)
      const [rows, participants] = await Promise.all([newest >= 1 ? repository.messagesBetween(conversation.id, oldest, newest) : [], repository.participantsOf(conversation.id)])
      // A message is read when its recipient (the participant who did not send it) has read up to it.
      const readUpTo = (senderId: string) => participants.find((participant) => participant.userId !== senderId)?.lastReadSeq ?? 0
      const items = await access.toMessages(db, rows, (row) => readUpTo(row.senderId))
      const more = newest >= 1 && oldest > 1
      return {
        items,
        pagination: {
          page: before !== null ? Math.floor((total - newest) / query.limit) + 1 : query.page,
          limit: query.limit,
          total,
          pages: Math.ceil(total / query.limit),
          hasNext: more,
          hasPrev: newest < total,
          nextCursor: more ? String(oldest) : null,
        },
      }
    },
  }
}
