import { Type, type Static } from '@sinclair/typebox'
import { Amount, Id, PageQuery } from '../../http/common.schemas.ts'
import { offerStatuses } from '../messaging/messaging.module.ts'

export const TITLE_MIN = 5
export const TITLE_MAX = 100
export const DESCRIPTION_MAX = 2000
export const PRICE_MIN = 5
export const PRICE_MAX = 50_000
export const DELIVERY_DAYS_MAX = 90
export const REVISIONS_MAX = 10
export const EXPIRES_IN_DAYS_MAX = 30
export const EXPIRES_IN_DAYS_DEFAULT = 7
export const REASON_MAX = 1000

export const CreateOfferBody = Type.Object(
  {
    title: Type.String({
      minLength: TITLE_MIN,
      maxLength: TITLE_MAX,
      // Not blank, and no markup: a '<' followed by a letter, '/', '!' or '?' would open a tag or comment.
      pattern: '^(?=[\\s\\S]*\\S)(?![\\s\\S]*<[A-Za-z/!?])',
      errorMessage: `must be ${TITLE_MIN} to ${TITLE_MAX} characters of plain text (no HTML)`,
      description: `${TITLE_MIN} to ${TITLE_MAX} characters, plain text; becomes the order’s title.`,
    }),
    description: Type.String({ maxLength: DESCRIPTION_MAX, errorMessage: `must be at most ${DESCRIPTION_MAX} characters`, description: `What the seller will deliver, at most ${DESCRIPTION_MAX} characters; becomes the order’s requirements.` }),
    price: Amount({
      minimum: PRICE_MIN,
      maximum: PRICE_MAX,
      errorMessage: `must be a number from ${PRICE_MIN.toFixed(2)} to ${PRICE_MAX.toFixed(2)} with at most two decimals`,
      description: `From ${PRICE_MIN.toFixed(2)} to ${PRICE_MAX.toFixed(2)}, at most two decimals, as a package price.`,
    }),
    deliveryDays: Type.Integer({ minimum: 1, maximum: DELIVERY_DAYS_MAX, errorMessage: `must be a whole number from 1 to ${DELIVERY_DAYS_MAX}`, description: 'Days from acceptance to the due date.' }),
    revisions: Type.Integer({ minimum: 0, maximum: REVISIONS_MAX, errorMessage: `must be a whole number from 0 to ${REVISIONS_MAX}`, description: 'Revisions the buyer may ask for.' }),
    expiresInDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: EXPIRES_IN_DAYS_MAX,
        default: EXPIRES_IN_DAYS_DEFAULT,
        errorMessage: `must be a whole number from 1 to ${EXPIRES_IN_DAYS_MAX}`,
        description: `Days the buyer has to answer, default ${EXPIRES_IN_DAYS_DEFAULT}.`,
      }),
    ),
    serviceId: Type.Optional(Type.String({ ...Id, errorMessage: 'must be a service id', description: 'One of your active services the offer is made under (the order counts for it).' })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        title: 'Logo and label for three coffee blends',
        description: 'A hand-drawn mark in blue and cream, plus labels for the Bilbao, Getxo and Durango blends, as SVG, PDF and PNG.',
        price: 340,
        deliveryDays: 10,
        revisions: 3,
        expiresInDays: 5,
        serviceId: '01963fdd-1142-7ab5-aaca-f0fc0c8cfd54',
      },
      { title: 'One extra social media banner', description: 'A 1500 x 500 banner in the style of the logo.', price: 40, deliveryDays: 2, revisions: 1 },
    ],
  },
)
export type CreateOfferBody = Static<typeof CreateOfferBody>

export const DeclineOfferBody = Type.Object(
  {
    reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: REASON_MAX, pattern: '\\S', errorMessage: `must be 1 to ${REASON_MAX} characters`, description: 'Why you decline; the seller reads it.' }),
    ),
  },
  { additionalProperties: false, examples: [{}, { reason: 'The budget is too high for us this month; could we start with the logo alone?' }] },
)

/** Withdrawing takes no fields. A field sent anyway is refused, not ignored. */
export const EmptyBody = Type.Object({}, { additionalProperties: false, examples: [{}] })

export const OffersQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      role: Type.Optional(Type.Union([Type.Literal('sent'), Type.Literal('received')], { errorMessage: 'must be sent or received', description: '`sent`: offers you made; `received`: offers made to you; both when absent.' })),
      status: Type.Optional(Type.Union(offerStatuses.map((status) => Type.Literal(status)), { errorMessage: `must be one of ${offerStatuses.join(', ')}` })),
    }),
  ],
  { additionalProperties: false },
)
export type OffersQuery = Static<typeof OffersQuery>
