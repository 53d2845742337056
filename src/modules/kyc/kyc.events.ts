import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'

const Decision = Type.Object({ submissionId: Type.String({ format: 'uuid' }), userId: Type.String({ format: 'uuid' }) })

/** Events this module emits (written to the outbox in the transaction of the decision); ids only, never identity data. */
export const kycEvents = {
  kycApproved: defineEvent('kyc.approved', 'Staff verified a seller’s identity: the user may now ask for payouts.', Decision),
  kycRejected: defineEvent('kyc.rejected', 'Staff rejected an identity submission; the user may submit again.', Decision),
}
