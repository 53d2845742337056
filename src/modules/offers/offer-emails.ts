import { escapeHtml } from '../../lib/text.ts'
import type { MailMessage } from '../../platform/mail/mailer.ts'
import { fromCents } from '../../lib/money.ts'
import type { OfferRow } from './offers.table.ts'

/** What happened to an offer, as its e-mail tells it. */
export type OfferNews = 'created' | 'accepted' | 'declined' | 'withdrawn' | 'expired'

function render(to: string, subject: string, lines: string[]): MailMessage {
  return {
    to,
    subject,
    text: lines.join('\n\n'),
    html: ['<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">', ...lines.map((line) => `<p>${escapeHtml(line)}</p>`), '</body></html>'].join(''),
  }
}

/** Who hears the news: the buyer of a new or withdrawn offer, the seller of an answered or expired one. */
export const addresseeOf = (offer: Pick<OfferRow, 'senderId' | 'recipientId'>, news: OfferNews): string => (news === 'created' || news === 'withdrawn' ? offer.recipientId : offer.senderId)

/** The e-mail about an offer, to the party `addresseeOf` names; `other` is the other party's public name. */
export function offerEmail(to: { email: string; fullName: string }, other: string, offer: OfferRow, news: OfferNews, link: string, currency: string): MailMessage {
  const terms = `"${offer.title}": ${fromCents(offer.priceCents).toFixed(2)} ${currency}, delivered in ${offer.deliveryDays} day${offer.deliveryDays === 1 ? '' : 's'}`
  const hello = `Hello ${to.fullName},`
  switch (news) {
    case 'created':
      return render(to.email, `${other} sent you a custom offer`, [hello, `${other} sent you a custom offer: ${terms}.`, `It is open until ${offer.expiresAt.toISOString()}. Accept or decline it here: ${link}`])
    case 'accepted':
      return render(to.email, `${other} accepted your custom offer`, [hello, `${other} accepted your offer ${terms}. The order is in progress and the price is in escrow.`, `Open your conversation: ${link}`])
    case 'declined':
      return render(to.email, `${other} declined your custom offer`, [hello, `${other} declined your offer ${terms}.`, ...(offer.declineReason ? [`Their reason: ${offer.declineReason}`] : []), `Open your conversation: ${link}`])
    case 'withdrawn':
      return render(to.email, `${other} withdrew a custom offer`, [hello, `${other} withdrew the offer ${terms}. It can no longer be accepted.`, `Open your conversation: ${link}`])
    case 'expired':
      return render(to.email, 'Your custom offer expired', [hello, `Your offer ${terms} to ${other} expired without an answer.`, `Open your conversation: ${link}`])
  }
}
