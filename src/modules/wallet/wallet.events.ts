import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'

const PayoutData = Type.Object({ payoutId: Type.String({ format: 'uuid' }), userId: Type.String({ format: 'uuid' }), amount: Type.Number() })

/** Events this module emits (written to the outbox in the transaction of the change). */
export const walletEvents = {
  payoutProcessed: defineEvent('payout.processed', 'Staff approved a payout: the money left the platform.', PayoutData),
  payoutRejected: defineEvent('payout.rejected', 'Staff rejected a payout: the money is back in the user’s available balance.', PayoutData),
}
