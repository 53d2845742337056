import { Type } from '@sinclair/typebox'
import { defineJob } from '../../platform/outbox/jobs.ts'

/** Jobs of the webhooks module, written in the transaction of the change that causes them. */
export const WEBHOOK_JOBS = {
  /** Tells the superusers that an endpoint was disabled (410, or a day of failures). */
  endpointDisabled: defineJob('mail.webhook_disabled', Type.Object({ endpointId: Type.String(), reason: Type.String() })),
}
