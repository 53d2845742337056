import { Type } from '@sinclair/typebox'
import type { Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fromCents } from '../../lib/money.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { requestAcceptance, requestKindOf, type Transition } from './order-status.ts'
import { createOrderRequestsRepository } from './order-requests.repository.ts'
import type { OrderRequestRow } from './order-requests.table.ts'
import { ordersEvents } from './orders.events.ts'
import type { OrderRow } from './orders.table.ts'

/** What happened to a request, as its event and e-mails tell it. */
export const requestNews = ['opened', 'accepted', 'declined', 'withdrawn', 'expired'] as const
export type RequestNews = (typeof requestNews)[number]

/** One e-mail about a request's news to one party, sent by the worker after the change committed. */
export const ORDER_REQUEST_MAIL_JOB = defineJob(
  'mail.order_request',
  Type.Object({ requestId: Type.String(), recipientId: Type.String(), news: Type.Union(requestNews.map((news) => Type.Literal(news))) }),
)

const EVENTS = {
  opened: ordersEvents.orderRequestOpened,
  accepted: ordersEvents.orderRequestAccepted,
  declined: ordersEvents.orderRequestDeclined,
  withdrawn: ordersEvents.orderRequestWithdrawn,
  expired: ordersEvents.orderRequestExpired,
} as const

/** A request as both parties (and staff) read it on the order. */
export function requestAnswer(row: OrderRequestRow) {
  return {
    id: row.id,
    orderId: row.orderId,
    type: row.type,
    status: row.status,
    requestedBy: row.requestedBy,
    reason: row.reason,
    days: row.days,
    amount: row.amountCents === null ? null : fromCents(row.amountCents),
    expiresAt: row.expiresAt.toISOString(),
    respondedAt: row.respondedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  }
}

/** The data of a request's events: the order's ids, the request's, and its days or amount when it has them. */
const eventData = (order: Pick<OrderRow, 'id' | 'serviceId' | 'buyerId' | 'sellerId'>, request: OrderRequestRow) => ({
  orderId: order.id,
  serviceId: order.serviceId,
  buyerId: order.buyerId,
  sellerId: order.sellerId,
  requestId: request.id,
  type: request.type,
  requestedBy: request.requestedBy,
  ...(request.days !== null && { days: request.days }),
  ...(request.amountCents !== null && { amount: fromCents(request.amountCents) }),
})

/**
 * The outbox writes of a request's news, in the change's transaction: its event, and one e-mail
 * job per party it concerns (a new request: the party who answers it; an outcome: both), so a
 * retried job never mails the other party twice.
 */
export async function recordRequestNews(outbox: Outbox, tx: Tx, order: OrderRow, request: OrderRequestRow, news: RequestNews, at: Date): Promise<void> {
  await emitEvent(outbox, tx, EVENTS[news], eventData(order, request), at)
  const author = request.requestedBy === 'buyer' ? order.buyerId : order.sellerId
  const other = author === order.buyerId ? order.sellerId : order.buyerId
  for (const recipientId of news === 'opened' ? [other] : [author, other]) await outbox.add(tx, ORDER_REQUEST_MAIL_JOB, { requestId: request.id, recipientId, news })
}

/** Ends the order's open request, if any, as `expired`: another move of the order made it moot. The order is locked by the caller. */
export async function expireOpenRequest(outbox: Outbox, tx: Tx, order: OrderRow, now: Date): Promise<void> {
  const closed = await createOrderRequestsRepository(tx).closeOpen(order.id, { status: 'expired', respondedAt: now })
  if (closed) await recordRequestNews(outbox, tx, order, closed, 'expired', now)
}

type ApplyMove = (tx: Tx, row: OrderRow, move: Transition, by: string, reason?: string) => Promise<OrderRow>

/**
 * What happens to a request nobody answered within ORDER_REQUEST_DAYS, in the caller's
 * transaction under the order's lock: a cancellation is accepted (the order is cancelled by the
 * system and the buyer refunded), any other kind is marked `expired`. The worker does it, and so
 * does any move of the order that finds its request overdue, before the move.
 */
export function createRequestSettling(deps: { clock: Clock; outbox: Outbox; applyMove: ApplyMove }) {
  const { clock, outbox, applyMove } = deps
  /** The order after settling its overdue request, or undefined when it has none. */
  return async function settleOverdue(tx: Tx, order: OrderRow): Promise<OrderRow | undefined> {
    const requests = createOrderRequestsRepository(tx)
    const open = await requests.findOpen(order.id)
    const now = clock.now()
    if (!open || open.expiresAt.getTime() > now.getTime()) return undefined
    const acceptance = requestKindOf(open.type).acceptedWhenUnanswered ? requestAcceptance(order.status, 'system') : undefined
    const closed = await requests.closeOpen(order.id, { status: acceptance ? 'accepted' : 'expired', respondedAt: open.expiresAt })
    const updated = acceptance ? await applyMove(tx, order, acceptance, 'system', open.reason) : order
    await recordRequestNews(outbox, tx, updated, closed!, acceptance ? 'accepted' : 'expired', now)
    return updated
  }
}

export type SettleOverdue = ReturnType<typeof createRequestSettling>
