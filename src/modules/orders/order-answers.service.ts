import { can, type Actor } from '../../access/access.ts'
import type { Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fromCents } from '../../lib/money.ts'
import type { MessagingService } from '../messaging/messaging.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService, UserSummary } from '../users/users.module.ts'
import type { LedgerService } from '../wallet/wallet.module.ts'
import { requestAnswer } from './order-request-rules.ts'
import { createOrderRequestsRepository } from './order-requests.repository.ts'
import type { OrderRequestRow } from './order-requests.table.ts'
import { allowedMoves, requestMoves } from './order-status.ts'
import { createOrdersRepository } from './orders.repository.ts'
import type { OrderDeliveryRow, OrderRow } from './orders.table.ts'

/** What the seller is (or was) paid: the total less what went back to the buyer and the platform's fee. */
export const sellerEarningCents = (row: Pick<OrderRow, 'totalCents' | 'platformFeeCents' | 'refundedCents'>): number => row.totalCents - row.refundedCents - row.platformFeeCents

/** Who may read an order: its two parties and staff with view_orders; everyone else gets 404. */
export const mayView = (row: OrderRow, actor: Actor): boolean => row.buyerId === actor.id || row.sellerId === actor.id || can(actor, 'view_orders')

/** Whether the viewer may tip the order now: its buyer, completed, not tipped yet, within the window after completion. */
export const mayTip = (row: OrderRow, viewer: Actor, now: Date, windowMs: number): boolean =>
  row.buyerId === viewer.id && row.status === 'completed' && row.tipCents === null && row.completedAt !== null && now.getTime() < row.completedAt.getTime() + windowMs

/** The completed orders a staff refund may concern, for staff who may make one (their earnings may still be clearing). */
const refundableIds = (rows: OrderRow[], viewer: Actor): string[] => (can(viewer, 'manage_orders') ? rows.filter((row) => row.status === 'completed').map((row) => row.id) : [])

/**
 * The viewer's moves of the moment: the table's, the request moves (opening one needs its reason;
 * answering or withdrawing one takes none), a tip, and a staff refund while earnings clear.
 */
const allowedActionsOf = (row: OrderRow, open: OrderRequestRow | undefined, viewer: Actor, canTip: boolean, canRefund: boolean) => [
  ...allowedMoves(row, viewer).map((move) => ({ action: move.action, status: move.to, reasonRequired: move.needsReason ?? false })),
  ...requestMoves(row, open, viewer).map((move) => ({ ...move, reasonRequired: !move.action.endsWith('_request') })),
  ...(canTip ? [{ action: 'tip', status: row.status, reasonRequired: false }] : []),
  ...(canRefund ? [{ action: 'staff_refund', status: row.status, reasonRequired: true }] : []),
]

export interface AnswerDeps {
  clock: Clock
  /** How long after completion the buyer may tip. */
  tipWindowMs: number
  users: Pick<UsersService, 'publicSummariesOf'>
  uploads: Pick<UploadsService, 'filesOf' | 'urlOf'>
  messaging: Pick<MessagingService, 'conversationsOfOrders'>
  ledger: Pick<LedgerService, 'ordersStillClearing'>
}

/** Order answers as a viewer sees them: parties' public fields, deliveries with signed file links, and the viewer's allowed moves. */
export function createOrderAnswers(deps: AnswerDeps) {
  const { clock, users, uploads, messaging, ledger, tipWindowMs } = deps

  type OrderFile = Awaited<ReturnType<AnswerDeps['uploads']['filesOf']>>[number]

  /** What was read for a set of orders besides their rows. */
  interface Related {
    people: Map<string, UserSummary>
    deliveries: OrderDeliveryRow[]
    fileById: Map<string, OrderFile>
    conversations: Map<string, string>
    /** Newest first. */
    requests: OrderRequestRow[]
    /** The completed orders whose earnings are still clearing, read only for staff who may refund them. */
    clearing: Set<string>
  }

  /** A delivery with its files' signed links (a file since deleted is left out). */
  const deliveryAnswer = (delivery: OrderDeliveryRow, fileById: Map<string, OrderFile>) => ({
    id: delivery.id,
    message: delivery.message,
    files: delivery.fileIds.flatMap((fileId) => {
      const file = fileById.get(fileId)
      return file ? [{ id: file.id, filename: file.filename, size: file.size, mimetype: file.mimetype, url: uploads.urlOf(file) }] : []
    }),
    createdAt: delivery.createdAt.toISOString(),
  })

  /** One order's answer from what was read for it: its parties, conversation, deliveries and their files. */
  function answerOf(row: OrderRow, related: Related, viewer: Actor, now: Date) {
    const { people, deliveries, fileById, conversations } = related
    const requests = related.requests.filter((request) => request.orderId === row.id)
    const open = requests.find((request) => request.status === 'open')
    return {
      id: row.id,
      // Every order has one: placing an order opens it in the same statement.
      conversationId: conversations.get(row.id)!,
      serviceId: row.serviceId,
      serviceTitle: row.serviceTitle,
      packageId: row.packageId,
      packageName: row.packageName,
      offerId: row.offerId,
      buyer: people.get(row.buyerId)!,
      seller: people.get(row.sellerId)!,
      status: row.status,
      requirements: row.requirements,
      extras: row.extras.map((extra) => ({ id: extra.id, title: extra.title, price: fromCents(extra.priceCents), additionalDays: extra.additionalDays })),
      price: fromCents(row.priceCents),
      total: fromCents(row.totalCents),
      platformFee: fromCents(row.platformFeeCents),
      refunded: fromCents(row.refundedCents),
      sellerEarning: fromCents(sellerEarningCents(row)),
      deliveryDays: row.deliveryDays,
      dueAt: row.dueAt?.toISOString() ?? null,
      // Past due and not delivered (a revision puts the order back in progress, still against its due date).
      late: row.status === 'in_progress' && row.dueAt !== null && row.dueAt < now,
      revisionsLeft: row.revisionsLeft ?? ('unlimited' as const),
      statusReason: row.statusReason,
      timeline: row.timeline.map((move) => ({ action: move.action, status: move.status, by: move.by, reason: move.reason, at: move.at })),
      deliveries: deliveries.filter((delivery) => delivery.orderId === row.id).map((delivery) => deliveryAnswer(delivery, fileById)),
      autoCompleteAt: row.status === 'delivered' ? (row.autoCompleteAt?.toISOString() ?? null) : null,
      allowedActions: allowedActionsOf(row, open, viewer, mayTip(row, viewer, now, tipWindowMs), related.clearing.has(row.id)),
      requests: requests.map(requestAnswer),
      tip: row.tipCents === null ? null : fromCents(row.tipCents),
      completedAt: row.completedAt?.toISOString() ?? null,
      cancelledAt: row.cancelledAt?.toISOString() ?? null,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    }
  }

  /** The answers for many orders in five queries side by side whatever their number (lists never query per row), a sixth for staff who may refund. */
  async function describeAll(executor: Executor, rows: OrderRow[], viewer: Actor) {
    const ids = rows.map((row) => row.id)
    const [people, deliveries, files, conversations, requests, clearing] = await Promise.all([
      users.publicSummariesOf(executor, [...new Set(rows.flatMap((row) => [row.buyerId, row.sellerId]))]),
      createOrdersRepository(executor).deliveriesOf(ids),
      uploads.filesOf(executor, 'order', ids, 'order_delivery'),
      messaging.conversationsOfOrders(executor, ids),
      createOrderRequestsRepository(executor).listOf(ids),
      ledger.ordersStillClearing(executor, refundableIds(rows, viewer)),
    ])
    const related = { people, deliveries, fileById: new Map(files.map((file) => [file.id, file])), conversations, requests, clearing }
    const now = clock.now()
    return rows.map((row) => answerOf(row, related, viewer, now))
  }

  return {
    describeAll,
    describe: async (executor: Executor, row: OrderRow, viewer: Actor) => (await describeAll(executor, [row], viewer))[0]!,
    /** A just-placed order's answer, from the parties already read and the conversation it opened: it has no deliveries or requests yet. */
    describeNew: (row: OrderRow, parties: UserSummary[], conversationId: string, viewer: Actor) =>
      answerOf(row, { people: new Map(parties.map((party) => [party.id, party])), deliveries: [], fileById: new Map(), conversations: new Map([[row.id, conversationId]]), requests: [], clearing: new Set() }, viewer, clock.now()),
  }
}

export type OrderAnswers = ReturnType<typeof createOrderAnswers>
export type OrderAnswer = Awaited<ReturnType<OrderAnswers['describe']>>
