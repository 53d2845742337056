import { Type, type Static } from '@sinclair/typebox'
import { Amount, Id, Nullable, StringEnum, Timestamp } from '../../http/common.schemas.ts'
import { requestStatuses, requestTypes } from './order-status.ts'

export const REQUEST_REASON_MIN = 10
export const REQUEST_REASON_MAX = 1000
export const EXTENSION_DAYS_MAX = 30
/** Bounds a partial refund before the order is read; what the order still holds in escrow is the real limit, checked under its lock. */
export const PARTIAL_REFUND_MAX = 1_000_000

const reason = Type.String({
  minLength: REQUEST_REASON_MIN,
  maxLength: REQUEST_REASON_MAX,
  // At least ten characters from the first to the last that is not a space.
  pattern: '\\S[\\s\\S]{8,}\\S',
  errorMessage: `must be ${REQUEST_REASON_MIN} to ${REQUEST_REASON_MAX} characters, not counting spaces around it`,
  description: `Why you ask, ${REQUEST_REASON_MIN} to ${REQUEST_REASON_MAX} characters; the other party reads it on the order and in the e-mail.`,
})

/** One branch per kind, each taking its own field: a field of another kind is refused as a field it does not accept. */
const branches = [
  Type.Object({ type: Type.Literal('cancellation'), reason }, { additionalProperties: false, description: 'Either party, while the order is pending, in progress or delivered.' }),
  Type.Object(
    {
      type: Type.Literal('extension'),
      reason,
      days: Type.Integer({ minimum: 1, maximum: EXTENSION_DAYS_MAX, errorMessage: `must be a whole number from 1 to ${EXTENSION_DAYS_MAX}`, description: `How many days later the order is due, 1 to ${EXTENSION_DAYS_MAX}.` }),
    },
    { additionalProperties: false, description: 'The seller, while the order is in progress.' },
  ),
  Type.Object(
    {
      type: Type.Literal('partial_refund'),
      reason,
      amount: Amount({
        minimum: 0.01,
        maximum: PARTIAL_REFUND_MAX,
        errorMessage: 'must be a number more than 0 with at most two decimals, less than what the order still holds in escrow',
        description: 'What goes back to the buyer at once: more than 0 and less than what the order still holds in escrow (its total less what was refunded before), at most two decimals.',
      }),
    },
    { additionalProperties: false, description: 'The seller, while the order is in progress or delivered.' },
  ),
]

/** A request: its `type` chooses the branch (a discriminated `oneOf`), so the document states which field each kind takes. */
export const OpenRequestBody = Type.Unsafe<Static<(typeof branches)[number]>>({
  type: 'object',
  required: ['type'],
  oneOf: branches,
  discriminator: { propertyName: 'type' },
  description: `\`cancellation\` takes \`reason\`; \`extension\` takes \`reason\` and \`days\`; \`partial_refund\` takes \`reason\` and \`amount\`. Kinds: ${requestTypes.join(', ')}.`,
  examples: [
    { type: 'extension', reason: 'The printer needs two more days for the proofs of the coffee bags.', days: 3 },
    { type: 'partial_refund', reason: 'The source files are late; I refund part of the price for the wait.', amount: 15 },
    { type: 'cancellation', reason: 'Our roastery changed its name, so this logo is no longer needed.' },
  ],
})
export type OpenRequestBody = Static<typeof OpenRequestBody>

/** Accepting, declining and withdrawing take no fields; a field sent anyway is refused, not ignored. */
export const RequestMoveBody = Type.Object({}, { additionalProperties: false, examples: [{}] })

export const OrderRequest = Type.Object(
  {
    id: Id,
    orderId: Id,
    type: StringEnum(requestTypes),
    status: StringEnum(requestStatuses, {
      description: '`open` until the other party accepts or declines it, its author withdraws it, or it ends: `expired` when ORDER_REQUEST_DAYS pass unanswered (a cancellation is `accepted` then) or another move of the order ends it.',
    }),
    requestedBy: StringEnum(['buyer', 'seller'] as const),
    reason: Type.String(),
    days: Nullable(Type.Integer({ description: 'An extension’s days; null for the other kinds.' })),
    amount: Nullable(Type.Number({ description: 'A partial refund’s amount, two decimals; null for the other kinds.' })),
    expiresAt: Type.String({ format: 'date-time', description: 'When it ends if nobody answers it (ORDER_REQUEST_DAYS after it was made).' }),
    respondedAt: Nullable(Type.String({ format: 'date-time', description: 'When it stopped being open.' })),
    createdAt: Timestamp,
  },
  { description: 'A request between the parties of an order (the resolution center).' },
)
