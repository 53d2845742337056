import { escapeHtml } from '../../lib/text.ts'
import type { MailMessage } from '../../platform/mail/mailer.ts'

function render(to: string, subject: string, lines: string[]): MailMessage {
  return {
    to,
    subject,
    text: lines.join('\n\n'),
    html: ['<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">', ...lines.map((line) => `<p>${escapeHtml(line)}</p>`), '</body></html>'].join(''),
  }
}

/** The decision on an identity submission; it names no identity data, only the outcome. */
export function kycDecisionEmail(user: { email: string; fullName: string }, decision: { approved: boolean; reason: string | null }): MailMessage {
  if (decision.approved) {
    return render(user.email, 'Your identity is verified', [
      `Hello ${user.fullName},`,
      'We checked the documents you sent and your identity is now verified. You can ask for payouts of your earnings.',
    ])
  }
  return render(user.email, 'We could not verify your identity', [
    `Hello ${user.fullName},`,
    `We could not verify your identity with the documents you sent. Reason: ${decision.reason ?? 'not given'}`,
    'You can send new documents (your personal details are kept) or correct your details first.',
  ])
}
