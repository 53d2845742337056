import { Type, type Static, type TInteger } from '@sinclair/typebox'
import { Amount, Id, Nullable, PageQuery, Timestamp } from '../../http/common.schemas.ts'
import { defineForm } from '../../http/multipart.ts'
import { FileReference, TAG_RULES } from '../uploads/uploads.module.ts'
import { UserSummary } from '../users/users.module.ts'
import { OrderRequest } from './order-requests.schemas.ts'
import { orderStatuses, transitionTable, type OrderStatus } from './order-status.ts'

export const REQUIREMENTS_MAX = 5_000

const StatusSchema = Type.Union(
  orderStatuses.map((status) => Type.Literal(status)),
  { errorMessage: `must be one of ${orderStatuses.join(', ')}` },
)

export const PlaceOrderBody = Type.Object(
  {
    serviceId: Type.String({ format: 'uuid', errorMessage: 'must be the id of a service' }),
    packageId: Type.String({ format: 'uuid', errorMessage: 'must be the id of a package of the service' }),
    requirements: Type.Optional(Type.String({ maxLength: REQUIREMENTS_MAX, errorMessage: `must be at most ${REQUIREMENTS_MAX} characters`, description: `What the seller needs to start, at most ${REQUIREMENTS_MAX} characters.` })),
    extras: Type.Optional(
      Type.Array(Type.String({ format: 'uuid', errorMessage: 'must be the id of an extra of the service' }), { maxItems: 5, uniqueItems: true, description: 'Ids of the service’s extras to add, each once.' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        serviceId: '01963fdd-1142-7ab5-aaca-f0fc0c8cfd54',
        packageId: '01966d40-cdf8-779a-b1a7-4361c834c666',
        requirements: 'A logo for "Tostadero Azul", a small coffee roastery in Bilbao. Blue and cream colours, something hand-drawn; it must work on coffee bags and on a shop sign.',
        extras: ['01968c84-bbb0-7036-b802-f7fedec5d7a5'],
      },
    ],
  },
)
export type PlaceOrderBody = Static<typeof PlaceOrderBody>

export const ChangeStatusBody = Type.Object(
  {
    status: StatusSchema,
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        pattern: '\\S',
        errorMessage: 'must be 1 to 1000 characters',
        description: 'Required to open a dispute, optional with any other move (a revision request’s note, why you cancel). Kept on the order’s `timeline` and in `statusReason`, and posted to the order’s conversation as your message, so the other party reads it in the chat.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: `Moves an order. The moves:\n\n${transitionTable()}`,
    examples: [
      { status: 'in_progress' },
      { status: 'in_progress', reason: 'The mark is right, but could the blue be a shade darker, closer to the bags we already print?' },
      { status: 'disputed', reason: 'The delivered logo uses a stock icon, not the hand-drawn mark we agreed on, and the seller has not answered for four days.' },
    ],
  },
)
export type ChangeStatusBody = Static<typeof ChangeStatusBody>

export const StaffCancelBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', errorMessage: 'must be 1 to 1000 characters', description: 'Why staff cancel the order; shown to both parties.' })) },
  { additionalProperties: false, examples: [{ reason: 'The seller closed their business and cannot deliver; the full amount goes back to the buyer.' }] },
)

/** Bounds a split's refund before the order is read; the order's escrow is the real limit, checked under its lock. */
export const RESOLVE_REFUND_MAX = 1_000_000

export const ResolveBody = Type.Object(
  {
    refundAmount: Amount({
      minimum: 0,
      maximum: RESOLVE_REFUND_MAX,
      errorMessage: 'must be a number from 0 to what the order holds in escrow, with at most two decimals',
      description: 'What goes back to the buyer, from 0 to what the order holds in escrow (its total less any partial refund accepted before), at most two decimals. The rest goes to the seller minus the platform fee on the rest.',
    }),
    note: Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: '\\S',
      errorMessage: 'must be 1 to 1000 characters',
      description: 'Why staff decided so; kept on the order’s `timeline`, in `statusReason` and in the audit log, and e-mailed to both parties.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ refundAmount: 40, note: 'The logo was delivered but without the source files the package promised: 40.00 goes back to the buyer, the rest to the seller.' }],
  },
)
export type ResolveBody = Static<typeof ResolveBody>

/** A delivery's note, in characters. */
export const MESSAGE_MAX = 1_000

/** A delivery holds at least one file and at most this many. */
export const DELIVERY_FILES_MAX = 10

export const DeliveryForm = defineForm({
  fields: {
    message: Type.String({
      minLength: 1,
      maxLength: MESSAGE_MAX,
      pattern: '\\S',
      errorMessage: `must be 1 to ${MESSAGE_MAX} characters, not only spaces`,
      description: `The delivery note, 1 to ${MESSAGE_MAX} characters.`,
      examples: ['Here is your logo: the final mark in colour and in one colour, as SVG, PDF and PNG, with the fonts and colour codes in the brand sheet.'],
    }),
  },
  files: { files: { description: 'The delivered files, any type.', maxBytes: TAG_RULES.order_delivery.maxBytes, maxCount: DELIVERY_FILES_MAX } },
})

export const OrdersQuery = Type.Composite([PageQuery, Type.Object({ status: Type.Optional(StatusSchema) })], { additionalProperties: false })
export type OrdersQuery = Static<typeof OrdersQuery>

export const StaffOrdersQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      status: Type.Optional(StatusSchema),
      buyerId: Type.Optional(Type.String({ format: 'uuid', errorMessage: 'must be a user id' })),
      sellerId: Type.Optional(Type.String({ format: 'uuid', errorMessage: 'must be a user id' })),
    }),
  ],
  { additionalProperties: false },
)

const OrderActionSchema = Type.String({
  description:
    '`accept`, `cancel`, `deliver`, `request_revision`, `complete`, `dispute`, `resolve_completed`, `resolve_cancelled`, `resolve_split`, `tip` or `staff_refund`; and the requests: `request_cancellation`, `request_extension`, `offer_partial_refund`, `accept_request`, `decline_request`, `withdraw_request` (in a timeline, `accept_request` is an accepted cancellation).',
})
const Money = (description: string) => Type.Number({ description: `${description} Two decimals, in the platform currency.` })

export const Order = Type.Object(
  {
    id: Id,
    conversationId: Type.String({ ...Id, description: 'The conversation of the buyer and the seller about this order, opened when it was placed (`GET /messages/conversations/{conversationId}`).' }),
    serviceId: Nullable(Type.String({ ...Id, description: 'Null for an order from a custom offer that named no service.' })),
    serviceTitle: Type.String({ description: 'As it was when the order was placed; an order from a custom offer carries the offer’s title.' }),
    packageId: Nullable(Type.String({ ...Id, description: 'Null for an order from a custom offer.' })),
    packageName: Type.String({ description: '`Custom offer` for an order from a custom offer.' }),
    offerId: Nullable(Type.String({ ...Id, description: 'The custom offer the order was placed from (`GET /offers`); null for an order of a package.' })),
    buyer: UserSummary,
    seller: UserSummary,
    status: StatusSchema,
    requirements: Type.String(),
    extras: Type.Array(Type.Object({ id: Id, title: Type.String(), price: Type.Number(), additionalDays: Type.Integer() })),
    price: Money('The package price at placement.'),
    total: Money('Package plus extras: what the buyer paid into escrow.'),
    platformFee: Money(
      'The platform’s share, PLATFORM_FEE_PERCENT of the total rounded half-up to the cent; after a partial refund, the order’s rate on what is left; after a split dispute resolution, the fee on what the seller got.',
    ),
    sellerEarning: Money('What the seller receives on completion: the total less `refunded` and the fee.'),
    deliveryDays: Type.Integer({ description: 'The package’s delivery days plus the extras’ additional days.' }),
    dueAt: Nullable(Type.String({ format: 'date-time', description: 'Set when the seller accepts: then plus `deliveryDays`.' })),
    late: Type.Boolean({ description: 'In progress past its due date.' }),
    revisionsLeft: Type.Union([Type.Integer(), Type.Literal('unlimited')]),
    statusReason: Nullable(Type.String({ description: 'The reason given with the latest move; null when it had none.' })),
    timeline: Type.Array(
      Type.Object({
        action: OrderActionSchema,
        status: StatusSchema,
        by: Type.Union([Type.Literal('buyer'), Type.Literal('seller'), Type.Literal('staff'), Type.Literal('system')], { description: 'Who moved it: a party, staff, or the system (auto-completion).' }),
        reason: Nullable(Type.String({ description: 'The reason or note sent with the move.' })),
        at: Timestamp,
      }),
      { description: 'Every move since the order was placed, oldest first.' },
    ),
    deliveries: Type.Array(
      Type.Object({
        id: Id,
        message: Type.String(),
        files: Type.Array(FileReference),
        createdAt: Timestamp,
      }),
      { description: 'Oldest first.' },
    ),
    autoCompleteAt: Nullable(Type.String({ format: 'date-time', description: 'While delivered: when the order completes by itself unless the buyer acts.' })),
    allowedActions: Type.Array(
      Type.Object({
        action: OrderActionSchema,
        status: StatusSchema,
        reasonRequired: Type.Boolean(),
      }),
      {
        description:
          'The moves the caller may make now: `status` to send to `PUT /orders/{orderId}/status`, except `deliver`, which is `POST /orders/{orderId}/deliver`, `resolve_split` (staff), which is `POST /admin/orders/{orderId}/resolve`, `tip` (the buyer of a completed order, within TIP_DAYS of completion, once), which is `POST /orders/{orderId}/tip` and leaves the status as it is, `staff_refund` (staff with manage_orders, on a completed order whose earnings are still clearing), which is `POST /admin/orders/{orderId}/refund` with a required note and leaves the status as it is, and the requests: `request_cancellation`, `request_extension` and `offer_partial_refund` are `POST /orders/{orderId}/requests` (none while a request is open), `accept_request` and `decline_request` (the other party of the open request) and `withdraw_request` (its author) are `POST /orders/{orderId}/requests/{requestId}/accept`, `/decline` and `/withdraw`; `status` is then the order’s status after the move.',
      },
    ),
    refunded: Money(
      'What went back to the buyer: accepted partial refunds (`offer_partial_refund`) and the refund of a split dispute resolution (`POST /admin/orders/{orderId}/resolve`) from escrow before the order ended, plus staff refunds of a completed order while its earnings clear (`POST /admin/orders/{orderId}/refund`, which may reach the tip too); 0 otherwise. Until the order ends, what it still holds in escrow is the total less this; `platformFee` is the fee on what the seller is paid, and `sellerEarning` the total less both.',
    ),
    requests: Type.Array(OrderRequest, { description: 'The requests between the parties (cancellation, extension, partial refund), newest first; at most one is `open`.' }),
    tip: Nullable(Money('The buyer’s tip after completion (`POST /orders/{orderId}/tip`); null until there is one.')),
    completedAt: Nullable(Timestamp),
    cancelledAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { description: 'An order, as one of its parties or staff see it.' },
)

export const OrdersStats = Type.Object({
  total: Type.Integer({ description: 'Orders ever placed.' }),
  byStatus: Type.Object(Object.fromEntries(orderStatuses.map((status) => [status, Type.Integer()])) as Record<OrderStatus, TInteger>, { description: 'Orders by their current status.' }),
  grossVolume: Money('What buyers paid for the work of completed orders: their totals less what went back to the buyer (partial refunds, a split resolution’s refund, a staff refund after completion).'),
})
