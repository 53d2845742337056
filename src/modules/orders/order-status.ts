import { can, type Actor, type Permission } from '../../access/access.ts'

/** The six order statuses (docs/orders.md). */
export const orderStatuses = ['pending', 'in_progress', 'delivered', 'completed', 'cancelled', 'disputed'] as const
export type OrderStatus = (typeof orderStatuses)[number]

/** Orders still under way: money is in escrow and the service cannot be deleted. */
export const openStatuses: readonly OrderStatus[] = ['pending', 'in_progress', 'delivered', 'disputed']

/** Who makes a move: a party of the order, staff (with a permission), or the system (the worker). */
export type MoveRole = 'buyer' | 'seller' | 'staff' | 'system'

/** The parties of an order: who makes and answers requests. */
export type Party = 'buyer' | 'seller'

/** What a move is called in `allowedActions` (`accept_request`: a request's acceptance that changes the status, a cancellation). */
export type OrderAction = 'accept' | 'cancel' | 'deliver' | 'request_revision' | 'complete' | 'dispute' | 'resolve_completed' | 'resolve_cancelled' | 'resolve_split' | 'accept_request'

export interface Transition {
  from: OrderStatus
  to: OrderStatus
  by: MoveRole
  action: OrderAction
  /** Staff moves need this permission (a superuser has all). */
  permission?: Permission
  /** Only through `POST /orders/{id}/deliver` (message and files), never through the status route. */
  viaDeliver?: boolean
  /** Only through `POST /admin/orders/{id}/resolve` (a refund amount and a note), never through the status route. */
  viaResolve?: boolean
  /** Only by accepting the other party's request (or, by the system, one nobody answered), never through the status route. */
  viaRequest?: boolean
  /** The body must carry a `reason`. */
  needsReason?: boolean
  /** Only while the order has revisions left. */
  needsRevisionLeft?: boolean
  /** What happens, for the docs table. */
  effect: string
}

const REFUND = 'what is still in escrow refunded to the buyer'
const PAY = 'what is still in escrow to the seller minus the fee on it (PLATFORM_FEE_PERCENT) to the platform; emits `order.completed`'
const SPLIT = '`refundAmount` of the escrow to the buyer, the rest to the seller minus the fee on the rest; emits `order.resolved`'

/** The kinds of request a party makes of the other (the resolution center, docs/orders.md). */
export const requestTypes = ['cancellation', 'extension', 'partial_refund'] as const
export type RequestType = (typeof requestTypes)[number]

export const requestStatuses = ['open', 'accepted', 'declined', 'withdrawn', 'expired'] as const
export type RequestStatus = (typeof requestStatuses)[number]

/** What the request moves are called in `allowedActions`: opening one of each kind, and answering or withdrawing the open one. */
export type RequestAction = 'request_cancellation' | 'request_extension' | 'offer_partial_refund' | 'accept_request' | 'decline_request' | 'withdraw_request'

export interface RequestKind {
  type: RequestType
  /** The move that opens it, in `allowedActions`. */
  action: 'request_cancellation' | 'request_extension' | 'offer_partial_refund'
  /** Who may open it; the other party answers it. */
  by: readonly Party[]
  /** The order statuses it may be opened in. */
  while: readonly OrderStatus[]
  /** The field it takes besides `reason`. */
  field?: 'days' | 'amount'
  /** The order's status once it is accepted, when acceptance changes it. */
  acceptedTo?: OrderStatus
  /** Unanswered within ORDER_REQUEST_DAYS, the worker accepts it instead of marking it expired. */
  acceptedWhenUnanswered?: boolean
  /** What accepting it does, for the docs table. */
  effect: string
}

/**
 * The requests of the resolution center, as data beside the moves: opening one is allowed to the
 * parties and in the statuses listed here, `allowedActions` lists them from it, and the docs
 * table is generated from it. An accepted request that changes the status is a move of its own
 * in `transitions` (`accept_request`), so its money and events are those of that move.
 */
export const requestKinds: readonly RequestKind[] = [
  {
    type: 'cancellation',
    action: 'request_cancellation',
    by: ['buyer', 'seller'],
    while: ['pending', 'in_progress', 'delivered'],
    acceptedTo: 'cancelled',
    acceptedWhenUnanswered: true,
    effect: `the order is cancelled, ${REFUND} (\`order_refund\`)`,
  },
  { type: 'extension', action: 'request_extension', by: ['seller'], while: ['in_progress'], field: 'days', effect: '`dueAt` moves `days` later' },
  {
    type: 'partial_refund',
    action: 'offer_partial_refund',
    by: ['seller'],
    while: ['in_progress', 'delivered'],
    field: 'amount',
    effect: '`amount` from the buyer’s escrow to their available balance at once (`order_partial_refund`); `refunded` grows, and completion pays the seller what is left minus the fee on it',
  },
]

export const requestKindOf = (type: RequestType): RequestKind => requestKinds.find((kind) => kind.type === type)!

export const otherParty = (party: Party): Party => (party === 'buyer' ? 'seller' : 'buyer')

/** The status-changing acceptances of requests: by the other party of its author, and by the system for one nobody answered. */
const requestAcceptances: Transition[] = requestKinds.flatMap((kind) =>
  kind.acceptedTo === undefined
    ? []
    : kind.while.flatMap((from) => {
        const accepters: MoveRole[] = [...new Set(kind.by.map(otherParty)), ...(kind.acceptedWhenUnanswered ? (['system'] as const) : [])]
        return accepters.map((by) => ({
          from,
          to: kind.acceptedTo!,
          by,
          action: 'accept_request' as const,
          viaRequest: true,
          effect: by === 'system' ? `a ${kind.type} request nobody answered within ORDER_REQUEST_DAYS; ${kind.effect}` : `the ${otherParty(by as Party)}’s ${kind.type} request accepted; ${kind.effect}`,
        }))
      }),
)

/**
 * Every allowed move of an order, as data. The service decides with it, each order answer
 * lists the caller's moves from it (`allowedActions`), and docs/orders.md is generated from it.
 */
export const transitions: readonly Transition[] = [
  { from: 'pending', to: 'in_progress', by: 'seller', action: 'accept', effect: 'due date = now + delivery days (package and extras)' },
  { from: 'pending', to: 'cancelled', by: 'buyer', action: 'cancel', effect: REFUND },
  { from: 'pending', to: 'cancelled', by: 'seller', action: 'cancel', effect: REFUND },
  { from: 'in_progress', to: 'delivered', by: 'seller', action: 'deliver', viaDeliver: true, effect: 'delivery recorded; auto-complete after ORDER_AUTO_COMPLETE_DAYS' },
  { from: 'delivered', to: 'in_progress', by: 'buyer', action: 'request_revision', needsRevisionLeft: true, effect: 'a revision is used' },
  { from: 'delivered', to: 'completed', by: 'buyer', action: 'complete', effect: PAY },
  { from: 'delivered', to: 'completed', by: 'system', action: 'complete', effect: `ORDER_AUTO_COMPLETE_DAYS after the latest delivery: ${PAY}` },
  { from: 'in_progress', to: 'disputed', by: 'buyer', action: 'dispute', needsReason: true, effect: 'staff decide' },
  { from: 'in_progress', to: 'disputed', by: 'seller', action: 'dispute', needsReason: true, effect: 'staff decide' },
  { from: 'delivered', to: 'disputed', by: 'buyer', action: 'dispute', needsReason: true, effect: 'staff decide' },
  { from: 'delivered', to: 'disputed', by: 'seller', action: 'dispute', needsReason: true, effect: 'staff decide' },
  { from: 'disputed', to: 'completed', by: 'staff', permission: 'resolve_disputes', action: 'resolve_completed', effect: PAY },
  { from: 'disputed', to: 'cancelled', by: 'staff', permission: 'resolve_disputes', action: 'resolve_cancelled', effect: REFUND },
  { from: 'disputed', to: 'completed', by: 'staff', permission: 'resolve_disputes', action: 'resolve_split', viaResolve: true, effect: `${SPLIT} (a refund less than the escrow)` },
  { from: 'disputed', to: 'cancelled', by: 'staff', permission: 'resolve_disputes', action: 'resolve_split', viaResolve: true, effect: 'a `refundAmount` of the whole escrow: all of it to the buyer; emits `order.resolved`' },
  { from: 'pending', to: 'cancelled', by: 'staff', permission: 'manage_orders', action: 'cancel', effect: REFUND },
  { from: 'in_progress', to: 'cancelled', by: 'staff', permission: 'manage_orders', action: 'cancel', effect: REFUND },
  ...requestAcceptances,
]

/** The facts about an order that decide its moves. */
export interface OrderFacts {
  status: OrderStatus
  buyerId: string
  sellerId: string
  /** Null: unlimited. */
  revisionsLeft: number | null
}

/** The roles an actor holds on an order: a party, staff, or both (staff may also buy). */
export function rolesOf(order: OrderFacts, actor: Actor): MoveRole[] {
  const roles: MoveRole[] = []
  if (actor.id === order.buyerId) roles.push('buyer')
  if (actor.id === order.sellerId) roles.push('seller')
  if (actor.isStaff || actor.isSuperuser) roles.push('staff')
  return roles
}

const conditionsHold = (order: OrderFacts, transition: Transition) => !transition.needsRevisionLeft || order.revisionsLeft === null || order.revisionsLeft > 0

/** Whether `actor` may make this move now (role, permission, condition); the status is the caller's to match. */
function mayMake(order: OrderFacts, actor: Actor, transition: Transition): boolean {
  if (!rolesOf(order, actor).includes(transition.by)) return false
  if (transition.permission && !can(actor, transition.permission)) return false
  return conditionsHold(order, transition)
}

/** Every move `actor` may make on the order now, deliver included; what `allowedActions` lists besides the request moves. */
export const allowedMoves = (order: OrderFacts, actor: Actor): Transition[] =>
  transitions.filter((transition) => transition.from === order.status && !transition.viaRequest && mayMake(order, actor, transition))

/** The party `actor` is of the order, if any (nobody orders from themselves, so one at most). */
export const partyOf = (order: Pick<OrderFacts, 'buyerId' | 'sellerId'>, actor: Pick<Actor, 'id'>): Party | undefined =>
  actor.id === order.buyerId ? 'buyer' : actor.id === order.sellerId ? 'seller' : undefined

/** Whether `party` may open a request of this kind on the order now (an open request aside). */
export const mayOpen = (order: Pick<OrderFacts, 'status'>, party: Party | undefined, kind: RequestKind): boolean =>
  party !== undefined && kind.by.includes(party) && kind.while.includes(order.status)

/** The order's open request, as far as its moves go. */
export interface OpenRequestFacts {
  type: RequestType
  requestedBy: Party
}

/**
 * The request moves `actor` may make now, each with the status the order has after it: with a
 * request open, answering it (its other party) or withdrawing it (its author), and no new one;
 * otherwise opening each kind the caller's side may open in this status.
 */
export function requestMoves(order: OrderFacts, open: OpenRequestFacts | undefined, actor: Actor): { action: RequestAction; status: OrderStatus }[] {
  const party = partyOf(order, actor)
  if (party === undefined) return []
  if (open) {
    if (open.requestedBy === party) return [{ action: 'withdraw_request', status: order.status }]
    return [
      { action: 'accept_request', status: requestKindOf(open.type).acceptedTo ?? order.status },
      { action: 'decline_request', status: order.status },
    ]
  }
  return requestKinds.filter((kind) => mayOpen(order, party, kind)).map((kind) => ({ action: kind.action, status: order.status }))
}

/** The move that accepting a request makes on an order in `status`, when acceptance changes the status. */
export const requestAcceptance = (status: OrderStatus, by: MoveRole): Transition | undefined =>
  transitions.find((transition) => transition.viaRequest && transition.from === status && transition.by === by)

export type Decision =
  | { ok: true; transition: Transition }
  /** `forbidden`: staff asking for a staff move without its permission (403, docs/orders.md); `allowed`: the moves the actor may make instead. */
  | { ok: false; forbidden: boolean; allowed: Transition[] }

/**
 * Decides a move to `to` through the status route. A party's move wins over a staff move when the
 * actor is both. Deliveries go through their own route, so they are never decided here.
 */
export function decide(order: OrderFacts, actor: Actor, to: OrderStatus): Decision {
  const allowed = allowedMoves(order, actor)
  const candidates = allowed.filter((transition) => transition.to === to && !transition.viaDeliver && !transition.viaResolve)
  const chosen = candidates.find((transition) => transition.by !== 'staff') ?? candidates[0]
  if (chosen) return { ok: true, transition: chosen }
  const staffMove = transitions.find((transition) => transition.from === order.status && transition.to === to && transition.by === 'staff' && !transition.viaResolve)
  const forbidden = staffMove !== undefined && rolesOf(order, actor).includes('staff') && !can(actor, staffMove.permission!) && conditionsHold(order, staffMove)
  return { ok: false, forbidden, allowed }
}

/** The system's move (auto-complete), or undefined when the order is not in a state it applies to. */
export const systemMove = (status: OrderStatus, to: OrderStatus): Transition | undefined =>
  transitions.find((transition) => transition.by === 'system' && transition.from === status && transition.to === to)

const who = (transition: Transition) =>
  transition.by === 'staff' ? `staff with ${transition.permission}` : transition.by === 'system' ? 'the system (worker)' : transition.by

/** The transition table as Markdown, for docs/orders.md and the API reference. */
export function transitionTable(): string {
  const rows = transitions.map((transition) => {
    const how = [
      transition.viaDeliver
        ? 'only through `POST /orders/{id}/deliver`'
        : transition.viaResolve
          ? 'only through `POST /admin/orders/{id}/resolve`, with a `note`'
          : transition.viaRequest && transition.by !== 'system'
            ? 'only through `POST /orders/{id}/requests/{requestId}/accept`'
            : transition.by === 'system'
              ? ''
              : `\`PUT /orders/{id}/status\` \`${transition.to}\``,
      transition.needsReason ? 'with a `reason`' : '',
      transition.needsRevisionLeft ? 'while revisions remain' : '',
    ]
      .filter(Boolean)
      .join(', ')
    return `| ${transition.from} | ${transition.to} | ${who(transition)} | \`${transition.action}\` | ${how || '-'} | ${transition.effect} |`
  })
  return ['| from | to | who | action | how | effect |', '|---|---|---|---|---|---|', ...rows].join('\n')
}

const list = (values: readonly string[]) => values.join(', ')

/** The request kinds as Markdown, for docs/orders.md. */
export function requestTable(): string {
  const rows = requestKinds.map((kind) => {
    const takes = ['`reason` (10 to 1000 characters)', ...(kind.field === 'days' ? ['`days` (1 to 30, whole)'] : kind.field === 'amount' ? ['`amount` (more than 0, less than what is still in escrow)'] : [])]
    const unanswered = kind.acceptedWhenUnanswered ? 'accepted by the worker' : '`expired`'
    return `| \`${kind.type}\` | \`${kind.action}\` | ${list(kind.by)} | ${list(kind.while)} | ${list(takes)} | ${kind.effect} | ${unanswered} |`
  })
  return ['| type | action | opened by | while the order is | with | accepted | unanswered after ORDER_REQUEST_DAYS |', '|---|---|---|---|---|---|---|', ...rows].join('\n')
}

const MARKERS = [
  { start: '<!-- transitions:start (generated from src/modules/orders/order-status.ts by `npm run docs:orders`) -->', end: '<!-- transitions:end -->', table: transitionTable },
  { start: '<!-- requests:start (generated from src/modules/orders/order-status.ts by `npm run docs:orders`) -->', end: '<!-- requests:end -->', table: requestTable },
]

/** A Markdown document with the generated tables (moves and requests) between their markers (replacing what was there). */
export function withTransitionTable(markdown: string): string {
  return MARKERS.reduce((text, { start, end, table }) => {
    const from = text.indexOf(start)
    const to = text.indexOf(end)
    if (from < 0 || to < from) throw new Error(`the document has no markers ${start} ... ${end}`)
    return `${text.slice(0, from + start.length)}\n${table()}\n${text.slice(to)}`
  }, markdown)
}
