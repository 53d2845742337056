import { can, type Actor, type Permission } from '../../access/access.ts'

/** The six order statuses (docs/orders.md). */
export const orderStatuses = ['pending', 'in_progress', 'delivered', 'completed', 'cancelled', 'disputed'] as const
export type OrderStatus = (typeof orderStatuses)[number]

/** Orders still under way: money is in escrow and the service cannot be deleted. */
export const openStatuses: readonly OrderStatus[] = ['pending', 'in_progress', 'delivered', 'disputed']

/** Who makes a move: a party of the order, staff (with a permission), or the system (the worker). */
export type MoveRole = 'buyer' | 'seller' | 'staff' | 'system'

/** What a move is called in `allowedActions`. */
export type OrderAction = 'accept' | 'cancel' | 'deliver' | 'request_revision' | 'complete' | 'dispute' | 'resolve_completed' | 'resolve_cancelled' | 'resolve_split'

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
  /** The body must carry a `reason`. */
  needsReason?: boolean
  /** Only while the order has revisions left. */
  needsRevisionLeft?: boolean
  /** What happens, for the docs table. */
  effect: string
}

const REFUND = 'escrow refunded to the buyer'
const PAY = 'escrow to the seller minus PLATFORM_FEE_PERCENT to the platform; emits `order.completed`'
const SPLIT = '`refundAmount` of the escrow to the buyer, the rest to the seller minus the fee on the rest; emits `order.resolved`'

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

/** Every move `actor` may make on the order now, deliver included; what `allowedActions` lists. */
export const allowedMoves = (order: OrderFacts, actor: Actor): Transition[] =>
  transitions.filter((transition) => transition.from === order.status && mayMake(order, actor, transition))

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
      transition.viaDeliver ? 'only through `POST /orders/{id}/deliver`' : transition.viaResolve ? 'only through `POST /admin/orders/{id}/resolve`, with a `note`' : transition.by === 'system' ? '' : `\`PUT /orders/{id}/status\` \`${transition.to}\``,
      transition.needsReason ? 'with a `reason`' : '',
      transition.needsRevisionLeft ? 'while revisions remain' : '',
    ]
      .filter(Boolean)
      .join(', ')
    return `| ${transition.from} | ${transition.to} | ${who(transition)} | \`${transition.action}\` | ${how || '-'} | ${transition.effect} |`
  })
  return ['| from | to | who | action | how | effect |', '|---|---|---|---|---|---|', ...rows].join('\n')
}

const TABLE_START = '<!-- transitions:start (generated from src/modules/orders/order-status.ts by `npm run docs:orders`) -->'
const TABLE_END = '<!-- transitions:end -->'

/** A Markdown document with the generated table between its markers (replacing what was there). */
export function withTransitionTable(markdown: string): string {
  const start = markdown.indexOf(TABLE_START)
  const end = markdown.indexOf(TABLE_END)
  if (start < 0 || end < start) throw new Error('the document has no transition table markers')
  return `${markdown.slice(0, start + TABLE_START.length)}\n${transitionTable()}\n${markdown.slice(end)}`
}
