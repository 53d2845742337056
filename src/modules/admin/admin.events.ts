import { Type } from '@sinclair/typebox'
import { defineEvent } from '../../platform/outbox/events.ts'

const Account = Type.Object({ userId: Type.String({ format: 'uuid' }) })

/** Events this module emits, each written to the outbox in the transaction of the change; ids only. */
export const adminEvents = {
  userSuspended: defineEvent('user.suspended', 'Staff suspended an account: it is locked out until the suspension ends.', Account),
  userUnsuspended: defineEvent('user.unsuspended', 'Staff ended the suspension of an account: its owner may log in again.', Account),
}
