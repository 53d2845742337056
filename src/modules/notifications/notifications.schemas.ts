import { Type, type Static } from '@sinclair/typebox'
import { CursorPage, Id, Nullable, oneOfFields, StringEnum, Timestamp } from '../../http/common.schemas.ts'
import { emailByDefault, kindNames, linkTypes, settableKinds } from './notification-kinds.ts'

/** At most this many ids are marked read in one request. */
export const MAX_READ_IDS = 100

export const Notification = Type.Object(
  {
    id: Id,
    kind: StringEnum(kindNames, { description: 'What happened, as a dotted name (docs/notifications.md lists every kind and who hears of it).', examples: ['order.delivered'] }),
    title: Type.String({ description: 'A short heading, e.g. "Order delivered".' }),
    body: Type.String({ description: 'One or two sentences saying what happened and what to do.' }),
    link: Type.Object(
      {
        type: StringEnum(linkTypes, { description: 'What kind of object it concerns.' }),
        id: Id,
      },
      { description: 'The object to open: an order, a conversation, a service, a payout, a KYC submission or a user.' },
    ),
    readAt: Nullable(Type.String({ format: 'date-time', description: 'When the person marked it read; null while unread.' })),
    createdAt: Timestamp,
  },
  { description: 'Something that happened to the caller: newest first in the list, and pushed to their sockets as `{ type: "notification", data }`.' },
)
export type Notification = Static<typeof Notification>

const Cursor = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9_-]+$',
  errorMessage: 'must be a cursor this list returned',
  description: 'Continue after this position: the `nextCursor` of the previous page. Takes precedence over `page`.',
})

export const ListNotificationsQuery = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page, at most 100 (default 20).' }),
    cursor: Type.Optional(Cursor),
    unread: Type.Optional(Type.Boolean({ errorMessage: 'must be true or false', description: '`true`: only the notifications not read yet; `false` or absent: all of them.' })),
  },
  { additionalProperties: false },
)
export type ListNotificationsQuery = Static<typeof ListNotificationsQuery>

export const NotificationPage = CursorPage(Notification)
export type NotificationPage = Static<typeof NotificationPage>

export const MarkReadBody = Type.Object(
  {
    ids: Type.Optional(
      Type.Array(Type.String({ ...Id, errorMessage: 'must be a notification id' }), {
        minItems: 1,
        maxItems: MAX_READ_IDS,
        errorMessage: { minItems: 'must name at least one notification', maxItems: `must name at most ${MAX_READ_IDS} notifications` },
        description: `Up to ${MAX_READ_IDS} of your notifications to mark read. Send this or \`all\`.`,
      }),
    ),
    all: Type.Optional(Type.Literal(true, { errorMessage: 'must be true', description: '`true` marks every one of your notifications read. Send this or `ids`.' })),
  },
  {
    additionalProperties: false,
    oneOf: oneOfFields('ids', 'all'),
    examples: [{ ids: ['01963fdd-1142-7ab5-aaca-f0fc0c8cfd54', '01963fdd-2b7e-7c41-9e0f-3d51a7e2c9b0'] }, { all: true }],
  },
)
export type MarkReadBody = Static<typeof MarkReadBody>

export const ReadResult = Type.Object({
  updated: Type.Integer({ description: 'How many notifications this request marked read (those read already are not counted).' }),
  unread: Type.Integer({ description: 'How many of your notifications are still unread.' }),
})

const EmailChoice = (kind: (typeof settableKinds)[number]) =>
  Type.Boolean({ description: `Default ${emailByDefault(kind) ? 'on' : 'off'}.` })

const choices = Object.fromEntries(settableKinds.map((kind) => [kind, EmailChoice(kind)]))

export const NotificationSettings = Type.Object(
  {
    email: Type.Object(choices, {
      description:
        'For every kind of notification you may switch, whether it is e-mailed to you as well. Security e-mails (activation, password reset, suspension and its end) are always sent and not listed.',
    }),
  },
  { description: 'Your notification settings (defaults in docs/notifications.md).' },
)

export const UpdateNotificationSettingsBody = Type.Object(
  {
    email: Type.Object(
      Object.fromEntries(settableKinds.map((kind) => [kind, Type.Optional(EmailChoice(kind))])),
      {
        additionalProperties: false,
        minProperties: 1,
        errorMessage: { minProperties: 'must name at least one kind' },
        description: 'The kinds to change, each `true` (e-mail me) or `false`; kinds not named keep their setting. A kind that is not listed (a security e-mail, or no kind at all) is refused.',
      },
    ),
  },
  { additionalProperties: false, examples: [{ email: { 'message.received': false, 'order.delivered': true } }] },
)
export type UpdateNotificationSettingsBody = Static<typeof UpdateNotificationSettingsBody>
