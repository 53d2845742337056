import { escapeHtml } from '../../lib/text.ts'
import type { MailMessage } from '../../platform/mail/mailer.ts'

function render(to: string, subject: string, greeting: string, lines: string[], action: { label: string; url: string }, footer: string): MailMessage {
  const text = [greeting, '', ...lines, '', `${action.label}: ${action.url}`, '', footer].join('\n')
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">',
    `<p>${escapeHtml(greeting)}</p>`,
    ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    `<p><a href="${escapeHtml(action.url)}">${escapeHtml(action.label)}</a></p>`,
    `<p style="color:#666;font-size:small">${escapeHtml(footer)}</p>`,
    '</body></html>',
  ].join('')
  return { to, subject, text, html }
}

export function activationEmail(user: { email: string; fullName: string }, url: string): MailMessage {
  return render(
    user.email,
    'Activate your account',
    `Hello ${user.fullName},`,
    ['Welcome! Please confirm your e-mail address to activate your account. The link is valid for 24 hours.'],
    { label: 'Activate your account', url },
    'If you did not create an account, you can ignore this message.',
  )
}

export function passwordResetEmail(user: { email: string; fullName: string }, url: string): MailMessage {
  return render(
    user.email,
    'Reset your password',
    `Hello ${user.fullName},`,
    ['Someone asked to reset the password of your account. The link is valid for one hour and works once.'],
    { label: 'Choose a new password', url },
    'If it was not you, ignore this message: your password stays as it is.',
  )
}
