import type { NotificationRow } from './notifications.table.ts'

/**
 * Every kind of notification: who hears of it (docs/notifications.md), how its title and body read
 * (rendered from the event's data when the notification is read, pushed or e-mailed), and its
 * e-mail. Which event makes which kind, for whom, is the trigger's (`notifications-from-events.sql`).
 *
 * E-mail, per kind:
 * - `own`: the module behind the kind writes its own e-mail (a message, an offer, a dispute split, a
 *   KYC decision, an order request) and asks `emailWanted` before sending it; on by default, as
 *   those e-mails were before the setting existed.
 * - `generic`: no module writes one; when the person switches the kind on, the notification itself
 *   is e-mailed (its title, body and link). Off by default, so nobody gets mail they did not get before.
 * - `always`: security news, e-mailed whatever the settings say; not settable.
 */
type Data = Record<string, unknown>
type Text = { title: string; body: string }

export type EmailRule = 'own' | 'generic' | 'always'

interface KindRule {
  readonly email: EmailRule
  readonly render: (data: Data, money: (amount: unknown) => string) => Text
}

const text = (title: string, body: string): Text => ({ title, body })
const plural = (count: unknown, unit: string) => `${String(count)} ${unit}${count === 1 ? '' : 's'}`

/** An order request as its notification names it: its type in words with its article, and its days or amount. */
function requestOf(data: Data, money: (amount: unknown) => string): string {
  const what = (typeof data.type === 'string' ? data.type : 'change').replace(/_/g, ' ')
  const named = `${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what}`
  if (typeof data.days === 'number') return `${named} (${plural(data.days, 'day')})`
  if (typeof data.amount === 'number') return `${named} (${money(data.amount)})`
  return named
}

const levelName = (level: unknown) => String(level).replace(/_/g, ' ')

export const notificationKinds = {
  'order.placed': { email: 'generic', render: (data, money) => text('New order', `A buyer placed an order: ${money(data.total)} is in escrow.`) },
  'order.accepted': { email: 'generic', render: () => text('Order accepted', 'The seller accepted your order and started work.') },
  'order.delivered': { email: 'generic', render: () => text('Order delivered', 'The seller delivered your order: complete it, or ask for a revision.') },
  'order.revision_requested': { email: 'generic', render: () => text('Revision requested', 'The buyer asked for a revision of your delivery.') },
  'order.completed': {
    email: 'generic',
    render: (data) =>
      data.by === 'system'
        ? text('Order completed', 'The order completed by itself: its delivery was neither accepted nor disputed in time.')
        : text('Order completed', 'The buyer accepted your delivery: the order is complete and your earning was credited to your wallet.'),
  },
  'order.cancelled': { email: 'generic', render: () => text('Order cancelled', 'The order was cancelled and its total went back to the buyer.') },
  'order.disputed': { email: 'generic', render: () => text('Order disputed', 'The other party opened a dispute about the order; staff will decide it.') },
  'order.resolved': { email: 'own', render: (data) => text('Dispute resolved', `Staff decided the dispute: the order is ${String(data.to)}.`) },
  'order.tipped': { email: 'generic', render: (data, money) => text('You got a tip', `The buyer tipped you ${money(data.amount)}; ${money(data.sellerEarning)} is in your wallet.`) },
  'order.refunded': { email: 'generic', render: (data, money) => text('Order refunded', `Staff refunded ${money(data.amount)} of the order to the buyer.`) },
  'order.request_opened': { email: 'own', render: (data, money) => text('New request on your order', `The ${String(data.requestedBy)} asked for ${requestOf(data, money)}: accept or decline it.`) },
  'order.request_accepted': { email: 'own', render: (data, money) => text('Request accepted', `Your request for ${requestOf(data, money)} was accepted.`) },
  'order.request_declined': { email: 'own', render: (data, money) => text('Request declined', `Your request for ${requestOf(data, money)} was declined.`) },
  'order.request_withdrawn': { email: 'own', render: (data, money) => text('Request withdrawn', `The ${String(data.requestedBy)} withdrew their request for ${requestOf(data, money)}.`) },
  'order.request_expired': { email: 'own', render: (data, money) => text('Request expired', `Your request for ${requestOf(data, money)} ended unanswered: the order moved on.`) },
  'offer.received': {
    email: 'own',
    render: (data, money) => text('New custom offer', `A seller sent you a custom offer: ${money(data.price)}, delivered in ${plural(data.deliveryDays, 'day')}. It is open until ${String(data.expiresAt)}.`),
  },
  'offer.accepted': { email: 'own', render: (data, money) => text('Offer accepted', `The buyer accepted your custom offer: ${money(data.price)} is in escrow and the order has started.`) },
  'offer.declined': {
    email: 'own',
    render: (data) => text('Offer declined', `The buyer declined your custom offer.${typeof data.reason === 'string' ? ` Their reason: ${data.reason}` : ''}`),
  },
  'offer.withdrawn': { email: 'own', render: () => text('Offer withdrawn', 'The seller withdrew a custom offer they had sent you.') },
  'offer.expired': { email: 'own', render: () => text('Offer expired', 'Your custom offer expired without an answer.') },
  'review.received': {
    email: 'generic',
    render: (data) => text('New review', typeof data.rating === 'number' ? `You received a review of an order: ${plural(data.rating, 'star')}.` : 'You received a review of an order.'),
  },
  'review.replied': { email: 'generic', render: () => text('Reply to your review', 'The person you reviewed replied to your review.') },
  'message.received': { email: 'own', render: (data) => text('New message', typeof data.preview === 'string' && data.preview !== '' ? data.preview : 'You received a file.') },
  'payout.processed': { email: 'generic', render: (data, money) => text('Payout sent', `Your payout of ${money(data.amount)} was sent.`) },
  'payout.rejected': { email: 'generic', render: (data, money) => text('Payout rejected', `Your payout of ${money(data.amount)} was rejected: the amount is back in your available balance.`) },
  'kyc.approved': { email: 'own', render: () => text('Identity verified', 'Your identity is verified: you can now ask for payouts.') },
  'kyc.rejected': { email: 'own', render: () => text('Identity not verified', 'We could not verify your identity with the documents you sent: see why, and send new ones.') },
  'service.approved': { email: 'generic', render: () => text('Service approved', 'Your service is approved and listed in the catalogue.') },
  'service.rejected': { email: 'generic', render: (data) => text('Service not approved', `Your service was not approved: ${String(data.reason)}. Editing it sends it for review again.`) },
  'seller.level_changed': { email: 'generic', render: (data) => text('Seller level changed', `Your seller level changed from ${levelName(data.from)} to ${levelName(data.to)}.`) },
  'account.suspended': { email: 'always', render: () => text('Account suspended', 'Staff suspended your account: you cannot log in until the suspension ends.') },
  'account.unsuspended': { email: 'always', render: () => text('Suspension ended', 'Your account is no longer suspended: you can log in again.') },
} as const satisfies Record<string, KindRule>

export type NotificationKind = keyof typeof notificationKinds

export const kindNames = Object.keys(notificationKinds) as NotificationKind[]

const isKind = (kind: string): kind is NotificationKind => Object.hasOwn(notificationKinds, kind)

/** The kinds whose e-mail a person may switch on or off: all but the security ones. */
export const settableKinds = kindNames.filter((kind) => notificationKinds[kind].email !== 'always')

/** Whether the kind is e-mailed for someone who never chose: the kinds that have their own e-mail. */
export const emailByDefault = (kind: NotificationKind): boolean => notificationKinds[kind].email === 'own'

/** The title and body of a notification; a kind this version does not know (written by a newer one) reads plainly. */
export function render(kind: string, data: Data, currency: string): Text {
  const money = (amount: unknown) => `${typeof amount === 'number' ? amount.toFixed(2) : String(amount)} ${currency}`
  return isKind(kind) ? notificationKinds[kind].render(data, money) : text('Notification', kind)
}

/** How a kind is e-mailed; a kind this version does not know is never e-mailed by it. */
export const emailRuleOf = (kind: string): EmailRule => (isKind(kind) ? notificationKinds[kind].email : 'own')

/** What a notification links to: the object a client opens. */
export const linkTypes = ['order', 'conversation', 'service', 'payout', 'kyc_submission', 'user'] as const
export type LinkType = (typeof linkTypes)[number]

/** A notification as its person reads it, in the list and in the pushed frame. */
export function present(row: NotificationRow, currency: string) {
  return {
    id: row.id,
    kind: row.kind as NotificationKind,
    ...render(row.kind, row.data, currency),
    link: { type: row.linkType as LinkType, id: row.linkId },
    readAt: row.readAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  }
}
