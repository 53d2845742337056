import { Type, type Static } from '@sinclair/typebox'
import { CursorPage, Id, IdParams, Nullable, oneOfFields, Timestamp } from '../../http/common.schemas.ts'
import { defineForm } from '../../http/multipart.ts'
import { FileReference, TAG_RULES } from '../uploads/uploads.module.ts'
import { Offer } from './message-offers.ts'
import { UserSummary } from '../users/users.module.ts'

export const MAX_CONTENT = 5000

const Content = Type.String({
  minLength: 1,
  maxLength: MAX_CONTENT,
  pattern: '\\S',
  errorMessage: `must be 1 to ${MAX_CONTENT} characters, not only spaces`,
  description: `The text, 1 to ${MAX_CONTENT} characters.`,
})

export const SendMessageBody = Type.Object(
  {
    conversationId: Type.Optional(Type.String({ ...Id, errorMessage: 'must be a conversation id', description: 'A conversation of the caller. Send this or `recipientId`.' })),
    recipientId: Type.Optional(Type.String({ ...Id, errorMessage: 'must be a user id', description: 'Starts, or continues, the direct conversation with this user. Send this or `conversationId`.' })),
    content: Content,
  },
  {
    additionalProperties: false,
    oneOf: oneOfFields('conversationId', 'recipientId'),
    examples: [
      { recipientId: '01961aea-5692-7f1d-b779-a5b1edf111cd', content: 'Hi María, I love your bakery logos. Could you do something similar for a coffee roastery?' },
      { conversationId: '01962ca2-6b4f-7bf7-984f-8600130ab0a4', content: 'Thanks! I will send the questionnaire back by Friday.' },
    ],
  },
)
export type SendMessageBody = Static<typeof SendMessageBody>

export const AttachmentForm = defineForm({
  fields: {
    conversationId: Type.String({ format: 'uuid', maxLength: 36, errorMessage: 'must be a conversation id', description: 'A conversation of the caller.', examples: ['01962ca2-6b4f-7bf7-984f-8600130ab0a4'] }),
    content: Type.Optional(
      Type.String({ maxLength: MAX_CONTENT, errorMessage: `must be at most ${MAX_CONTENT} characters`, description: `A caption, at most ${MAX_CONTENT} characters.`, examples: ['Here is the brand questionnaire, filled in.'] }),
    ),
  },
  files: { file: { description: 'The file (exactly one), any type.', maxBytes: TAG_RULES.chat_attachment.maxBytes } },
})

export const Attachment = { ...FileReference, description: 'The participants may also fetch its path with their Bearer token.' }

export const Message = Type.Object({
  id: Id,
  conversationId: Id,
  senderId: Id,
  content: Type.String({ description: 'Empty for a file sent without a caption.' }),
  attachment: Nullable(Attachment),
  offer: Nullable(Type.Composite([Offer], { description: 'The custom offer this message presents, as it stands now; null for an ordinary message.' })),
  isRead: Type.Boolean({ description: 'Whether the recipient has read it.' }),
  createdAt: Timestamp,
})
export type Message = Static<typeof Message>

export const Conversation = Type.Object({
  id: Id,
  orderId: Nullable(Id),
  otherParticipant: UserSummary,
  lastMessage: Nullable(Message),
  unreadCount: Type.Integer({ description: 'Messages from the other participant the caller has not read.' }),
  lastActivityAt: Timestamp,
  createdAt: Timestamp,
})

const Cursor = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9_-]+$',
  errorMessage: 'must be a cursor this list returned',
  description: 'Continue after this position: the `nextCursor` of the previous page. Takes precedence over `page`.',
})

export const ListQuery = (defaultLimit: number) =>
  Type.Object(
    {
      page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' }),
      limit: Type.Integer({ minimum: 1, maximum: 100, default: defaultLimit, description: `Items per page, at most 100 (default ${defaultLimit}).` }),
      cursor: Type.Optional(Cursor),
    },
    { additionalProperties: false },
  )

export const MessagePage = CursorPage(Message)
export type MessagePage = Static<typeof MessagePage>

export const ConversationParams = IdParams('conversationId')

/** Marking read takes no fields: the whole conversation is read. A field sent anyway is refused, not ignored. */
export const MarkReadBody = Type.Object({}, { additionalProperties: false, description: 'No fields: everything in the conversation is marked read.', examples: [{}] })

export const ReadReceipt = Type.Object({ conversationId: Id, unreadCount: Type.Integer() })
