import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { notFound, validationError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { fromCents, toCents } from '../../lib/money.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { mayView } from './order-answers.service.ts'
import { escrowLeftCents, feeOnCents } from './order-money.ts'
import type { OrderMoves } from './order-moves.service.ts'
import { requestEmail } from './order-request-emails.ts'
import { recordRequestNews, requestAnswer, type RequestNews } from './order-request-rules.ts'
import { invalidRequestMove, requestOpen } from './order-requests.errors.ts'
import { createOrderRequestsRepository } from './order-requests.repository.ts'
import type { OpenRequestBody } from './order-requests.schemas.ts'
import type { OrderRequestRow } from './order-requests.table.ts'
import { mayOpen, partyOf, requestAcceptance, requestKindOf, requestMoves, type Party, type RequestKind } from './order-status.ts'
import { createOrdersRepository } from './orders.repository.ts'
import type { OrderRow } from './orders.table.ts'

export interface RequestsDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  ledger: Pick<LedgerService, 'transfer'>
  users: Pick<UsersService, 'findAccountById'>
  notifications: Pick<NotificationsService, 'emailWanted'>
  moves: Pick<OrderMoves, 'applyMove' | 'changeOrder' | 'settleOverdue' | 'underOrderLock'>
  /** How long a request stays open unanswered (ORDER_REQUEST_DAYS). */
  requestExpiresAfterMs: number
}

type Answer = 'accept' | 'decline' | 'withdraw'

/** Why `party` may not open this kind of request on the order now. */
function refusal(order: OrderRow, party: Party | undefined, kind: RequestKind): string {
  if (party === undefined) return 'Only the buyer and the seller of an order make requests'
  if (!kind.by.includes(party)) return `A ${kind.type} request is made by the ${kind.by.join(' or the ')}, not the ${party}`
  return `A ${order.status} order takes no ${kind.type} request: only a ${kind.while.join(', ')} one`
}

/** What accepting the request does to the locked order; the request is already closed as accepted. */
async function applyAccepted(deps: Pick<RequestsDeps, 'clock' | 'ledger' | 'moves'>, tx: Tx, order: OrderRow, request: OrderRequestRow, party: Party, actorId: string): Promise<OrderRow> {
  const now = deps.clock.now()
  const orders = createOrdersRepository(tx)
  if (request.type === 'cancellation') return deps.moves.applyMove(tx, order, requestAcceptance(order.status, party)!, actorId, request.reason)
  if (request.type === 'extension') return orders.update(order.id, { dueAt: new Date((order.dueAt ?? now).getTime() + request.days! * DAY), updatedAt: now })
  const amountCents = request.amountCents!
  await deps.ledger.transfer(tx, {
    from: { userId: order.buyerId, kind: 'escrow' },
    to: { userId: order.buyerId, kind: 'available' },
    amountCents,
    type: 'order_partial_refund',
    description: `Partial refund: ${order.serviceTitle}`,
    orderId: order.id,
  })
  // The fee follows what is left, at the rate fixed when the order was placed (kept in placement_fee_cents from now on).
  return orders.update(order.id, {
    refundedCents: order.refundedCents + amountCents,
    placementFeeCents: order.placementFeeCents ?? order.platformFeeCents,
    platformFeeCents: feeOnCents(order, escrowLeftCents(order) - amountCents),
    updatedAt: now,
  })
}

/**
 * The worker's half of a request's news: the e-mail to one party, skipped for an account no longer
 * active or a person who switched off e-mails of that kind of news (GET /users/me/notification-settings).
 */
function createRequestMailing(deps: Pick<RequestsDeps, 'db' | 'mailer' | 'users' | 'notifications' | 'appUrl'>) {
  const { db, mailer, users, notifications, appUrl } = deps
  return {
    async sendRequestEmail(job: { requestId: string; recipientId: string; news: RequestNews }): Promise<void> {
      const request = await createOrderRequestsRepository(db).findById(job.requestId)
      if (!request) return
      const [order, recipient] = await Promise.all([createOrdersRepository(db).findById(request.orderId), users.findAccountById(db, job.recipientId)])
      if (!order || !recipient?.isActive || recipient.suspendedAt !== null) return
      if (!(await notifications.emailWanted(db, recipient.id, `order.request_${job.news}`))) return
      await mailer.send(requestEmail(recipient, order, request, job.news, `${appUrl}/orders/${order.id}`))
    },
  }
}

/**
 * The resolution center (docs/orders.md): requests between the parties of an order, each made,
 * answered and settled under the order's row lock, so of two answers at once one wins and the
 * other finds the request closed. An accepted request applies its effect in the same
 * transaction: a cancellation is the order's move to `cancelled`, an extension moves `dueAt`, a
 * partial refund moves money out of escrow at once.
 */
export function createOrderRequests(deps: RequestsDeps) {
  const { db, clock, outbox, moves, requestExpiresAfterMs } = deps

  /** Accept, decline or withdraw the order's request `requestId`: the other party answers, its author withdraws, while it is open. */
  const answer = (actor: Actor, orderId: string, requestId: string, verb: Answer) =>
    moves.changeOrder(
      actor,
      orderId,
      (order) => mayView(order, actor),
      async (tx, order) => {
        const requests = createOrderRequestsRepository(tx)
        const request = await requests.findOfOrder(order.id, requestId)
        if (!request) throw notFound('Request')
        const party = partyOf(order, actor)
        const mayAnswer = party !== undefined && (verb === 'withdraw' ? party === request.requestedBy : party !== request.requestedBy)
        if (!mayAnswer || request.status !== 'open') {
          const allowed = requestMoves(order, request.status === 'open' ? request : await requests.findOpen(order.id), actor).map((move) => move.action)
          const why = request.status !== 'open' ? `the request is ${request.status}` : verb === 'withdraw' ? 'only its author withdraws a request' : 'only the other party answers a request'
          throw invalidRequestMove(`You cannot ${verb} this request: ${why}`, allowed)
        }
        const now = clock.now()
        const status = verb === 'accept' ? 'accepted' : verb === 'decline' ? 'declined' : 'withdrawn'
        const closed = (await requests.closeOpen(order.id, { status, respondedAt: now }))!
        const updated = verb === 'accept' ? await applyAccepted(deps, tx, order, closed, party, actor.id) : order
        await recordRequestNews(outbox, tx, updated, closed, status, now)
        return updated
      },
    )

  /** Settles one overdue request, if any is left that no other worker holds; false when there is none. */
  const settleOneDue = () =>
    db.transaction(async (tx) => {
      const [order] = await createOrderRequestsRepository(tx).lockOrdersWithDueRequests(clock.now(), 1)
      if (!order) return false
      await moves.settleOverdue(tx, order)
      return true
    })

  return {
    /**
     * `POST /orders/{orderId}/requests`: a party opens a request the table in `order-status.ts`
     * allows them in the order's status (422 INVALID_TRANSITION otherwise), when none is open
     * (422 REQUEST_OPEN); a partial refund must leave something in escrow (400 on `amount`).
     */
    async openRequest(actor: Actor, orderId: string, body: OpenRequestBody) {
      const kind = requestKindOf(body.type)
      // The body's schema gives each kind its own field (a field of another kind is 400), and amounts are whole cents.
      const days = body.type === 'extension' ? body.days : null
      const amountCents = body.type === 'partial_refund' ? toCents(body.amount)! : null
      const request = await moves.underOrderLock(
        orderId,
        (order) => mayView(order, actor),
        async (tx, order) => {
          const requests = createOrderRequestsRepository(tx)
          const open = await requests.findOpen(order.id)
          const party = partyOf(order, actor)
          if (!mayOpen(order, party, kind)) throw invalidRequestMove(refusal(order, party, kind), requestMoves(order, open, actor).map((move) => move.action))
          if (open) throw requestOpen()
          const escrow = escrowLeftCents(order)
          if (amountCents !== null && amountCents >= escrow) throw validationError([{ field: 'amount', message: `must be less than ${fromCents(escrow).toFixed(2)}, what the order still holds in escrow` }])
          const now = clock.now()
          const created = await requests.insert({
            id: newId(),
            orderId: order.id,
            type: kind.type,
            status: 'open',
            requestedBy: party!,
            requesterId: actor.id,
            reason: body.reason.trim(),
            days,
            amountCents,
            expiresAt: new Date(now.getTime() + requestExpiresAfterMs),
            createdAt: now,
          })
          await recordRequestNews(outbox, tx, order, created, 'opened', now)
          return created
        },
      )
      return requestAnswer(request)
    },

    /** `POST /orders/{orderId}/requests/{requestId}/accept`: the other party; answers the order. */
    acceptRequest: (actor: Actor, orderId: string, requestId: string) => answer(actor, orderId, requestId, 'accept'),
    /** `POST /orders/{orderId}/requests/{requestId}/decline`: the other party; answers the order. */
    declineRequest: (actor: Actor, orderId: string, requestId: string) => answer(actor, orderId, requestId, 'decline'),
    /** `POST /orders/{orderId}/requests/{requestId}/withdraw`: its author; answers the order. */
    withdrawRequest: (actor: Actor, orderId: string, requestId: string) => answer(actor, orderId, requestId, 'withdraw'),

    /**
     * The worker's periodic task: settles the requests nobody answered within ORDER_REQUEST_DAYS
     * (a cancellation accepted, the others expired), each in its own transaction under its order's
     * row lock, skipping orders another worker or a move holds, so each is settled once.
     */
    async settleDueRequests(limit = 100): Promise<number> {
      let settled = 0
      while (settled < limit && (await settleOneDue())) settled++
      return settled
    },

    ...createRequestMailing(deps),
  }
}

export type OrderRequests = ReturnType<typeof createOrderRequests>
