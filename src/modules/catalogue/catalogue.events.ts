import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'

/** Events this module emits (written to the outbox in the transaction of the change). */
export const catalogueEvents = {
  serviceApproved: defineEvent(
    'service.approved',
    'Staff approved a pending service: it is now active and listed in the catalogue.',
    Type.Object({ serviceId: Type.String({ format: 'uuid' }), sellerId: Type.String({ format: 'uuid' }) }),
  ),
  serviceRejected: defineEvent(
    'service.rejected',
    'Staff rejected a pending service, with a reason the seller sees; editing it resubmits it for review.',
    Type.Object({ serviceId: Type.String({ format: 'uuid' }), sellerId: Type.String({ format: 'uuid' }), reason: Type.String() }),
  ),
}
