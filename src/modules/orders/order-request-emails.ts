import { fromCents } from '../../lib/money.ts'
import { escapeHtml } from '../../lib/text.ts'
import type { MailMessage } from '../../platform/mail/mailer.ts'
import type { RequestNews } from './order-request-rules.ts'
import type { OrderRequestRow } from './order-requests.table.ts'
import type { OrderRow } from './orders.table.ts'

const money = (cents: number) => fromCents(cents).toFixed(2)

function render(to: string, subject: string, lines: string[]): MailMessage {
  return {
    to,
    subject,
    text: `${lines.join('\n\n')}\n`,
    html: ['<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">', ...lines.map((line) => `<p>${escapeHtml(line)}</p>`), '</body></html>'].join(''),
  }
}

const LABELS = { cancellation: 'cancellation request', extension: 'request for more time', partial_refund: 'partial refund offer' } as const

/** What the author asks, as the other party reads it. */
function asked(request: OrderRequestRow): string {
  if (request.type === 'cancellation') return 'asks to cancel the order'
  if (request.type === 'extension') return `asks for ${request.days} more day${request.days === 1 ? '' : 's'} to deliver`
  return `offers to refund ${money(request.amountCents!)} of the price`
}

/** What accepting it did, read from the order after it. */
function applied(request: OrderRequestRow, order: OrderRow): string {
  if (request.type === 'cancellation') return 'the order is cancelled and what was left in escrow went back to the buyer’s wallet'
  if (request.type === 'extension') return `the order is now due ${order.dueAt?.toISOString() ?? 'later'}`
  return `${money(request.amountCents!)} went back to the buyer’s wallet`
}

/**
 * The e-mail about a request's news to one of the order's parties. A request settled by time
 * closed at its `expiresAt` (an answer at that moment finds it overdue and settles it first), so
 * `respondedAt` tells an unanswered request from one another move ended.
 */
export function requestEmail(to: { email: string; fullName: string }, order: OrderRow, request: OrderRequestRow, news: RequestNews, link: string): MailMessage {
  const label = LABELS[request.type]
  const about = `"${order.serviceTitle}"`
  const hello = `Hello ${to.fullName},`
  const unanswered = request.respondedAt !== null && request.respondedAt.getTime() >= request.expiresAt.getTime()
  const open = `The order: ${link}`
  switch (news) {
    case 'opened': {
      const otherwise = request.type === 'cancellation' ? 'the order is cancelled and the buyer refunded' : 'it expires'
      return render(to.email, `The ${request.requestedBy} ${asked(request)}: ${order.serviceTitle}`, [
        hello,
        `The ${request.requestedBy} of ${about} ${asked(request)}.`,
        `Their reason: ${request.reason}`,
        `Accept or decline it before ${request.expiresAt.toISOString()}; unanswered, ${otherwise}. ${open}`,
      ])
    }
    case 'accepted':
      return render(to.email, `Accepted: the ${label} on ${order.serviceTitle}`, [hello, `The ${label} on ${about} was accepted${unanswered ? ' as nobody answered it in time' : ''}: ${applied(request, order)}.`, open])
    case 'declined':
      return render(to.email, `Declined: the ${label} on ${order.serviceTitle}`, [hello, `The ${label} on ${about} was declined; nothing changed.`, open])
    case 'withdrawn':
      return render(to.email, `Withdrawn: the ${label} on ${order.serviceTitle}`, [hello, `The ${request.requestedBy} withdrew the ${label} on ${about}; nothing changed.`, open])
    case 'expired':
      return render(to.email, `Expired: the ${label} on ${order.serviceTitle}`, [hello, `The ${label} on ${about} expired: ${unanswered ? 'nobody answered it in time' : 'the order moved on before it was answered'}.`, open])
  }
}
