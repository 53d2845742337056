import { Type } from '@sinclair/typebox'
import type { Tx } from '../../db/client.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'

export const ORDERS_JOBS = {
  /** `note` is staff's reason, empty when an all-or-nothing resolution was given none. */
  resolvedEmail: defineJob('mail.order_resolved', Type.Object({ orderId: Type.String(), recipientId: Type.String(), refundCents: Type.Integer(), sellerCents: Type.Integer(), note: Type.String() })),
}

/**
 * Every resolution of a dispute, split or all-or-nothing, tells both parties by e-mail what each
 * receives and why (the notification of kind `order.resolved` leaves its e-mail to this job).
 */
export async function queueResolvedEmails(outbox: Outbox, tx: Tx, order: { id: string; buyerId: string; sellerId: string }, amounts: { refundCents: number; sellerCents: number }, note: string | undefined) {
  for (const recipientId of [order.buyerId, order.sellerId]) {
    await outbox.add(tx, ORDERS_JOBS.resolvedEmail, { orderId: order.id, recipientId, ...amounts, note: note ?? '' })
  }
}
