import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, Message, ok, responses } from '../../http/common.schemas.ts'
import { commonErrors, fieldError } from '../../lib/errors.ts'
import { authErrors } from './auth.errors.ts'
import { requireAuth, sessionOf } from '../../http/auth-hooks.ts'
import { UserSchema as User } from '../users/users.module.ts'
import type { AuthService } from './auth.service.ts'
import {
  EmailBody,
  EmailCheckResult,
  EmailQuery,
  EmailResult,
  LoginBody,
  LoginResult,
  LogoutBody,
  RefreshBody,
  RefreshResult,
  RegisterBody,
  ResetPasswordBody,
  TokenBody,
} from './auth.schemas.ts'

const tags = ['auth']
const config = { rateLimitBucket: 'auth' as const }

type App = Parameters<FastifyPluginAsyncTypebox>[0]

/** `/auth`: accounts, login sessions, password resets, and the e-mail check, in the API reference's order. */
export const authRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, { auth }) => {
  accountRoutes(app, auth)
  sessionRoutes(app, auth)
  passwordResetRoutes(app, auth)

  app.get(
    '/auth/check-email',
    {
      config,
      schema: {
        tags,
        summary: 'Is this e-mail registered?',
        querystring: EmailQuery,
        response: responses({ 200: Envelope(EmailCheckResult) }, 400),
      },
    },
    async (request) => ok(await auth.checkEmail(request.query.email)),
  )
}

/** An account's start: register, activate, and a new activation e-mail. */
function accountRoutes(app: App, auth: AuthService) {
  app.post(
    '/auth/register',
    {
      config,
      schema: {
        tags,
        summary: 'Register an account',
        description: 'Creates an inactive account and e-mails an activation link. Send the name as `fullName` or `name`.',
        body: RegisterBody,
        response: responses({ 201: Envelope(User) }, 400),
      },
    },
    async (request, reply) => {
      const { name, fullName = name, ...rest } = request.body
      if (fullName === undefined) throw fieldError('fullName', 'is required')
      return reply.status(201).send(ok(await auth.register({ ...rest, fullName })))
    },
  )

  app.post(
    '/auth/activate',
    {
      config,
      schema: {
        tags,
        summary: 'Activate an account',
        description:
          'A token used a second time answers 400 `TOKEN_USED` on `token`: the account is already active, log in. A genuine token past its 24 hours answers 400 `TOKEN_EXPIRED`: ask for a new link with `POST /auth/activation/resend`. Any other bad token is 400 `VALIDATION_ERROR` on `token`.',
        body: TokenBody,
        response: responses({ 200: Envelope(User) }, commonErrors.VALIDATION_ERROR, authErrors.TOKEN_USED, authErrors.TOKEN_EXPIRED),
      },
    },
    async (request) => ok(await auth.activate(request.body.token)),
  )

  app.post(
    '/auth/activation/resend',
    {
      config,
      schema: {
        tags,
        summary: 'Send a new activation e-mail',
        description: 'Always succeeds, so it does not reveal which e-mails are registered.',
        body: EmailBody,
        response: responses({ 200: Envelope(EmailResult) }, 400),
      },
    },
    async (request) => ok(await auth.resendActivation(request.body.email)),
  )
}

/** A login session: log in, refresh its tokens, log out. */
function sessionRoutes(app: App, auth: AuthService) {
  app.post(
    '/auth/login',
    {
      config,
      schema: {
        tags,
        summary: 'Log in',
        description:
          'Wrong password, unknown e-mail and an account deactivated by staff all answer 401 `UNAUTHENTICATED` alike. The right password of an account that was never activated answers 401 `ACCOUNT_NOT_ACTIVATED`: follow the e-mailed link or ask for a new one with `POST /auth/activation/resend`.',
        body: LoginBody,
        response: responses({ 200: Envelope(LoginResult) }, 400, commonErrors.UNAUTHENTICATED, authErrors.ACCOUNT_NOT_ACTIVATED),
      },
    },
    async (request) => ok(await auth.login(request.body.email, request.body.password)),
  )

  app.post(
    '/auth/refresh',
    {
      config,
      schema: {
        tags,
        summary: 'Exchange a refresh token for a new token pair',
        description:
          'Each refresh token works once. A refresh token sent a second time is taken as stolen: it answers 401 and ends its session, so every token of that login stops working. Clients must not refresh twice in parallel.',
        body: RefreshBody,
        response: responses({ 200: Envelope(RefreshResult) }, 400, 401),
      },
    },
    async (request) => {
      const token = request.body.refreshToken ?? request.body.refresh
      if (token === undefined) throw fieldError('refreshToken', 'is required')
      return ok(await auth.refresh(token))
    },
  )

  app.post(
    '/auth/logout',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        summary: 'Log out',
        description: 'Ends the session of the access token used for this call: it and every refresh token of that login stop working. A refresh token sent in the body ends its session too.',
        security: [{ bearerAuth: [] }],
        body: LogoutBody,
        response: responses({ 200: Envelope(Message) }, 400, 401),
      },
    },
    async (request) => {
      await auth.logout(sessionOf(request), request.body?.refreshToken ?? request.body?.refresh)
      return ok({ message: 'Logged out' })
    },
  )
}

/** A forgotten password: ask for the e-mail, then set a new password with its token. */
function passwordResetRoutes(app: App, auth: AuthService) {
  for (const url of ['/auth/forgot-password', '/auth/password-reset/ask']) {
    app.post(
      url,
      {
        config,
        schema: {
          tags,
          summary: 'Ask for a password-reset e-mail',
          description: 'Always succeeds; only active accounts receive the e-mail. Both paths are the same operation.',
          body: EmailBody,
          response: responses({ 200: Envelope(EmailResult) }, 400),
        },
      },
      async (request) => ok(await auth.requestPasswordReset(request.body.email)),
    )
  }

  for (const url of ['/auth/reset-password', '/auth/password-reset']) {
    app.post(
      url,
      {
        config,
        schema: {
          tags,
          summary: 'Set a new password with a reset token',
          description:
            'The token works once. Every token issued before the reset stops working. A genuine token past its hour answers 400 `TOKEN_EXPIRED`: ask for a new link with `POST /auth/forgot-password`. Any other bad token is 400 `VALIDATION_ERROR` on `token`.',
          body: ResetPasswordBody,
          response: responses({ 200: Envelope(EmailResult) }, commonErrors.VALIDATION_ERROR, authErrors.TOKEN_EXPIRED),
        },
      },
      async (request) => ok(await auth.resetPassword(request.body.token, request.body.password)),
    )
  }
}
