import { Type, type Static } from '@sinclair/typebox'
import { Amount, Id, Nullable, Timestamp } from '../../http/common.schemas.ts'
import type { Executor } from '../../db/client.ts'

export const offerStatuses = ['pending', 'accepted', 'declined', 'withdrawn', 'expired'] as const
export type OfferStatus = (typeof offerStatuses)[number]

/**
 * A custom offer as both parties see it. Its messages carry it (`offer`), so it is declared here;
 * the offers module answers with the same schema.
 */
export const Offer = Type.Object(
  {
    id: Id,
    conversationId: Type.String({ ...Id, description: 'The direct conversation the offer was made in.' }),
    senderId: Type.String({ ...Id, description: 'The seller who made the offer.' }),
    recipientId: Type.String({ ...Id, description: 'The buyer it is made to: the one who may accept or decline it.' }),
    serviceId: Nullable(Type.String({ ...Id, description: 'The seller’s service the offer is made under; null when it names none.' })),
    title: Type.String(),
    description: Type.String(),
    price: Amount({ description: 'What the buyer pays into escrow on accepting. Two decimals, in the platform currency.' }),
    deliveryDays: Type.Integer({ description: 'The order is due this many days after the offer is accepted.' }),
    revisions: Type.Integer(),
    status: Type.Union(
      offerStatuses.map((status) => Type.Literal(status)),
      { description: '`pending` until the recipient accepts or declines it, the sender withdraws it, or it expires.' },
    ),
    declineReason: Nullable(Type.String({ description: 'The reason the recipient gave when declining, if any.' })),
    expiresAt: Timestamp,
    orderId: Nullable(Type.String({ ...Id, description: 'The order placed when the offer was accepted.' })),
    respondedAt: Nullable(Type.String({ format: 'date-time', description: 'When it was accepted, declined, withdrawn or expired.' })),
    createdAt: Timestamp,
  },
  { description: 'A custom offer from a seller to a buyer in a direct conversation.' },
)
export type Offer = Static<typeof Offer>

/** Reads the offers messages present, by offer id; the offers module registers it. */
export type OfferReader = (executor: Executor, offerIds: string[]) => Promise<Map<string, Offer>>

/** Where messages find their offers: nothing until the offers module registers its reader. */
export function createOfferSlot() {
  let reader: OfferReader = () => Promise.resolve(new Map())
  return {
    register: (read: OfferReader): void => {
      reader = read
    },
    /** The offers of these ids (duplicates and nulls ignored); no query when there is none. */
    read: (executor: Executor, ids: (string | null)[]): Promise<Map<string, Offer>> => {
      const wanted = [...new Set(ids.filter((id): id is string => id !== null))]
      return wanted.length === 0 ? Promise.resolve(new Map()) : reader(executor, wanted)
    },
  }
}

export type OfferSlot = ReturnType<typeof createOfferSlot>
