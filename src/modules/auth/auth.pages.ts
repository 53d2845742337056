import { escapeHtml } from '../../lib/text.ts'
import formbody from '@fastify/formbody'
import { Value } from '@sinclair/typebox/value'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { HOUR } from '../../lib/clock.ts'
import { AppError, fieldError } from '../../lib/errors.ts'
import { Email, Password } from '../users/users.module.ts'
import { authErrors } from './auth.errors.ts'
import type { AuthService } from './auth.service.ts'
import { TOKEN_LIFETIMES } from './tokens.ts'

/**
 * The pages the activation and reset e-mails link to (`{APP_URL}/activate?token=...`,
 * `{APP_URL}/reset-password?token=...`), for deployments with no front end at APP_URL
 * (decision 0015). A GET only checks the link and shows a form, because mail scanners follow
 * links; the POST acts. A link that is expired or no good offers a form asking for a new one
 * (decision 0110). Plain HTML: no script (the CSP allows none inline), every value escaped.
 */

const MAX_TOKEN_LENGTH = 4096
const INVALID_LINK = 'is invalid or has expired'

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#222}' +
  'label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.5rem;box-sizing:border-box}' +
  'button{margin-top:1rem;padding:.6rem 1.2rem}.error{color:#a00}'

/** `blocks` are HTML built by the helpers below, which escape every value they put in. */
function page(title: string, ...blocks: string[]): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">',
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>`,
    `<body><main><h1>${escapeHtml(title)}</h1>${blocks.join('')}</main></body></html>`,
  ].join('')
}

const paragraph = (text: string) => `<p>${escapeHtml(text)}</p>`
const problem = (text: string) => `<p class="error" role="alert">${escapeHtml(text)}</p>`
const hiddenToken = (token: string) => `<input type="hidden" name="token" value="${escapeHtml(token)}">`

const activationForm = (token: string) =>
  page(
    'Activate your account',
    paragraph('Press the button to confirm your e-mail address and activate your account.'),
    `<form method="post" action="/activate">${hiddenToken(token)}<button type="submit">Activate my account</button></form>`,
  )

const passwordField = (name: string, label: string) =>
  `<label for="${name}">${escapeHtml(label)}</label>` +
  `<input id="${name}" name="${name}" type="password" autocomplete="new-password" required minlength="8" maxlength="128">`

const resetForm = (token: string, error?: string) =>
  page(
    'Choose a new password',
    error ? problem(error) : '',
    paragraph('Use 8 to 128 characters with an uppercase letter, a lowercase letter and a digit.'),
    `<form method="post" action="/reset-password">${hiddenToken(token)}` +
      passwordField('password', 'New password') +
      passwordField('passwordConfirmation', 'New password again') +
      '<button type="submit">Change my password</button></form>',
  )

/**
 * Asks for a new link by e-mail. A form cannot send the JSON API's body without a script, so it
 * posts to a page route of this plugin, which calls the same service operation.
 */
const newLinkForm = (action: string, intro: string, email = '') =>
  paragraph(intro) +
  `<form method="post" action="${action}"><label for="email">E-mail address</label>` +
  `<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${escapeHtml(email)}">` +
  '<button type="submit">Send me a new link</button></form>'

const hours = (lifetime: number) => (lifetime === HOUR ? '1 hour' : `${lifetime / HOUR} hours`)

const NEW_ACTIVATION_LINK = '/activation/resend'
const NEW_RESET_LINK = '/forgot-password'

const newActivationLinkForm = (email?: string) =>
  newLinkForm(NEW_ACTIVATION_LINK, 'Enter the e-mail address you registered with and we will send you a new activation link.', email)

const newResetLinkForm = (email?: string) =>
  newLinkForm(NEW_RESET_LINK, 'Enter the e-mail address of your account and we will send you a new link to choose a password.', email)

/** What a page offers after a link that cannot be used, by the route it was opened at. */
const NEXT_STEPS: Record<string, () => string> = { '/activate': () => newActivationLinkForm(), '/reset-password': () => newResetLinkForm() }

const incompleteLink = (title: string, url: string) =>
  page(title, problem('This link is incomplete. Open the link from the e-mail again, or copy all of it into the address bar.'), NEXT_STEPS[url]?.() ?? '')

/** A used activation link says to log in; any other refusal of the link (expired, invalid) is mended by a new one. */
const isLinkProblem = (error: AppError) => error.code !== authErrors.TOKEN_USED.code && error.details.some((detail) => detail.field === 'token')

/** A string field of a query or form body; repeated or absent fields are undefined. */
function fieldOf(source: unknown, name: string): string | undefined {
  const value = source !== null && typeof source === 'object' ? (source as Record<string, unknown>)[name] : undefined
  return typeof value === 'string' ? value : undefined
}

function tokenOf(source: unknown): string | undefined {
  const token = fieldOf(source, 'token')
  return token && token.length <= MAX_TOKEN_LENGTH ? token : undefined
}

const FIELD_LABELS: Record<string, string> = { token: 'The link', password: 'The password' }

const TITLES: Record<string, string> = {
  '/activate': 'Your account was not activated',
  '/reset-password': 'Your password was not changed',
  [NEW_ACTIVATION_LINK]: 'No new link was sent',
  [NEW_RESET_LINK]: 'No new link was sent',
}

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.status(status).type('text/html; charset=utf-8').send(body)
}

/** The pages' counterpart of http/error-handler.ts: the same statuses, as a page instead of JSON. */
function renderError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const url = request.routeOptions.url ?? ''
  const title = TITLES[url] ?? 'Something went wrong'
  if (error instanceof AppError && error.statusCode < 500) {
    const lines = error.details.length > 0 ? error.details.map((detail) => `${FIELD_LABELS[detail.field] ?? detail.field} ${detail.message}.`) : [error.message]
    const nextStep = isLinkProblem(error) ? (NEXT_STEPS[url]?.() ?? '') : ''
    return html(reply, error.statusCode, page(title, ...lines.map(problem), nextStep))
  }
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return html(reply, status, page(title, problem('The request could not be processed.')))
  // The error, never the body: the body holds the token and the password.
  request.log.error({ err: error }, 'unhandled error')
  return html(reply, 500, page(title, problem('Something went wrong on our side. Please try again later.')))
}

type PagesAuth = Pick<AuthService, 'activate' | 'checkActivationToken' | 'resendActivation' | 'resetPassword' | 'checkResetToken' | 'requestPasswordReset'>

export const authPages: FastifyPluginAsync<{ auth: PagesAuth }> = async (app, { auth }) => {
  // Forms post urlencoded bodies. Registered inside this plugin, the parser serves these routes
  // only: the JSON API keeps refusing urlencoded bodies with 415.
  await app.register(formbody)
  app.setErrorHandler(renderError)
  app.addHook('onSend', async (_request, reply) => {
    // The pages carry tokens: not stored by caches, not leaked to other sites in a Referer.
    reply.header('cache-control', 'no-store')
    reply.header('referrer-policy', 'no-referrer')
  })

  // Hidden from the OpenAPI document, which describes the JSON API only.
  const options = { config: { rateLimitBucket: 'auth' as const }, schema: { hide: true } }

  app.get('/activate', options, async (request, reply) => {
    const token = tokenOf(request.query)
    if (!token) return html(reply, 400, incompleteLink('Activate your account', '/activate'))
    await auth.checkActivationToken(token)
    return html(reply, 200, activationForm(token))
  })

  app.post('/activate', options, async (request, reply) => {
    const token = tokenOf(request.body)
    if (!token) throw fieldError('token', INVALID_LINK)
    await auth.activate(token)
    return html(reply, 200, page('Your account is active', paragraph('You can now log in with your e-mail address and password.')))
  })

  app.get('/reset-password', options, async (request, reply) => {
    const token = tokenOf(request.query)
    if (!token) return html(reply, 400, incompleteLink('Choose a new password', '/reset-password'))
    // Checked before the form is filled: nobody types a new password twice into a dead link.
    await auth.checkResetToken(token)
    return html(reply, 200, resetForm(token))
  })

  app.post('/reset-password', options, async (request, reply) => {
    const token = tokenOf(request.body)
    if (!token) throw fieldError('token', INVALID_LINK)
    const password = fieldOf(request.body, 'password')
    // The API's rule, from the same schema; the form is shown again so the link is not lost.
    if (password === undefined || !Value.Check(Password, password)) {
      return html(reply, 400, resetForm(token, `The password ${String(Password.errorMessage)}.`))
    }
    if (password !== fieldOf(request.body, 'passwordConfirmation')) return html(reply, 400, resetForm(token, 'The two passwords do not match.'))
    await auth.resetPassword(token, password)
    return html(
      reply,
      200,
      page('Your password was changed', paragraph('You can now log in with your new password. Devices that were logged in have to log in again.')),
    )
  })

  /**
   * The new-link forms. Like the JSON routes, the answer is the same whether or not an account
   * would get mail (decision 0016): only the mailbox's owner learns it.
   */
  const newLinkRequest = (url: string, form: (email?: string) => string, send: (email: string) => Promise<{ email: string }>, sent: (email: string) => string) =>
    app.post(url, options, async (request, reply) => {
      const email = fieldOf(request.body, 'email') ?? ''
      if (!Value.Check(Email, email)) return html(reply, 400, page(TITLES[url]!, problem(`The e-mail address ${String(Email.errorMessage)}.`), form(email)))
      const { email: normalised } = await send(email)
      return html(reply, 200, page('Check your inbox', paragraph(sent(normalised))))
    })

  newLinkRequest(
    NEW_ACTIVATION_LINK,
    newActivationLinkForm,
    (email) => auth.resendActivation(email),
    (email) => `If ${email} belongs to an account waiting for activation, a new activation link is on its way. It works for ${hours(TOKEN_LIFETIMES.activation)}.`,
  )
  newLinkRequest(
    NEW_RESET_LINK,
    newResetLinkForm,
    (email) => auth.requestPasswordReset(email),
    (email) => `If ${email} belongs to an active account, a link to choose a new password is on its way. It works for ${hours(TOKEN_LIFETIMES.reset)}.`,
  )
}
