import { isUnchecked, type Actor, type Caller } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import { rowFromJson } from '../../db/json-rows.ts'
import { notFound, validationError, type FieldError } from '../../lib/errors.ts'
import { isUuid, newId } from '../../lib/ids.ts'
import { eventJobValuesWithoutData } from '../../platform/outbox/events.ts'
import type { SessionCheck } from '../auth/auth.module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { MessagingService } from '../messaging/messaging.module.ts'
import type { UsersService, UserSummary } from '../users/users.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import type { OrderAnswers } from './order-answers.service.ts'
import { ownService } from './orders.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { preparePlacement } from './orders.repository.ts'
import { orders } from './orders.table.ts'

export interface PlaceOrderInput {
  serviceId: string
  packageId: string
  requirements?: string
  extras?: string[]
}

export interface PlacementDeps {
  db: Db
  sessions: SessionCheck
  ledger: Pick<LedgerService, 'book' | 'transferSqlWith'>
  catalogue: Pick<CatalogueService, 'offerSql' | 'lockOrderableSql' | 'pricedChoiceSql'>
  users: Pick<UsersService, 'publicSummarySql'>
  messaging: Pick<MessagingService, 'orderConversationCtes' | 'orderConversationValues'>
  answers: Pick<OrderAnswers, 'describeNew'>
  /** The platform's share in basis points (10 % = 1000). */
  platformFeeBasisPoints: number
}

/**
 * An id as the statement takes it: a well-formed UUID, or else (from a caller the route's schema
 * did not check) the nil UUID, which is no row's id, so the answer is a 404 or a 400, not a
 * failed cast.
 */
const asUuid = (id: string): string => (isUuid(id) ? id : '00000000-0000-0000-0000-000000000000')

/** Placing an order into escrow. */
export function createOrderPlacement(deps: PlacementDeps) {
  const { db, sessions, ledger, catalogue, users, messaging, answers, platformFeeBasisPoints } = deps
  const place = preparePlacement({
    sessionSql: sessions.sql,
    sessionLiveSql: sessions.liveSql,
    transferSqlWith: ledger.transferSqlWith,
    offerSql: catalogue.offerSql,
    publicSummarySql: users.publicSummarySql,
    lockOrderableSql: catalogue.lockOrderableSql,
    pricedChoiceSql: catalogue.pricedChoiceSql,
    orderConversationCtes: messaging.orderConversationCtes,
  })

  return {
    /**
     * `POST /orders`: one statement (`preparePlacement`) reads the caller's session, the offer
     * and both parties, prices the package and extras as they are now, and, when everything
     * holds, moves the total into the buyer's escrow and writes the order (the prices copied onto
     * it), its conversation and `order.created`. The errors are decided here on what it read, in
     * the order a client expects: 401, 404, 422 OWN_SERVICE, 400 naming the fields, 422
     * INSUFFICIENT_FUNDS; none of them wrote anything.
     */
    async placeOrder(caller: Caller, input: PlaceOrderInput) {
      const buyerId = isUnchecked(caller) ? caller.claims.sub : caller.id
      const id = newId()
      const conversation = messaging.orderConversationValues()
      let answer: { actor: Actor; parties: [UserSummary, UserSummary]; placed: Record<string, unknown> | null } | undefined
      const transfer = { from: { userId: buyerId, kind: 'available' }, to: { userId: buyerId, kind: 'escrow' }, type: 'order_payment', orderId: id } as const
      await ledger.book(db, transfer, async (transferValues) => {
        const row = await place(db, {
          ...transferValues,
          ...sessions.params(caller),
          serviceId: asUuid(input.serviceId),
          packageId: asUuid(input.packageId),
          extraIds: JSON.stringify(input.extras ?? []),
          buyerId,
          requirements: input.requirements ?? '',
          platformFeeBasisPoints,
          ...conversation,
          ...eventJobValuesWithoutData(ordersEvents.orderCreated, new Date(transferValues.createdAt)),
        })
        // Every refusal below is decided on what the statement matched, so it also stopped the write.
        const actor = await sessions.actorOf(caller, row.session)
        const { offer, buyer, seller } = row
        if (!offer || offer.status !== 'active' || !buyer || !seller) throw notFound('Service')
        if (offer.sellerId === actor.id) throw ownService()
        const problems: FieldError[] = []
        if (!row.package_found) problems.push({ field: 'packageId', message: 'is not a package of this service' })
        for (const index of row.missing_extras) problems.push({ field: `extras.${index}`, message: 'is not an extra of this service' })
        if (problems.length > 0) throw validationError(problems)
        if (!row.live) throw notFound('Service')
        answer = { actor, parties: [buyer, seller], placed: row.placed }
        return row
      })
      const placed = answer!.placed
      if (!placed) throw new Error('the order was paid for but not written')
      return answers.describeNew(rowFromJson(orders, placed), answer!.parties, conversation.orderConversationId, answer!.actor)
    },
  }
}
