import { API_PREFIX } from '../../http/prefix.ts'
import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Where a client asks for new links; the refusals below name them so nobody is left stuck. */
export const ACTIVATION_RESEND_PATH = `${API_PREFIX}/auth/activation/resend`
export const FORGOT_PASSWORD_PATH = `${API_PREFIX}/auth/forgot-password`

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const authErrors = defineErrors({
  TOKEN_USED: { status: 400, description: 'The activation link was already used: the account is active, log in instead.' },
  TOKEN_EXPIRED: {
    status: 400,
    description: `The activation or password-reset link is genuine but past its lifetime: ask for a new one (\`POST ${ACTIVATION_RESEND_PATH}\` or \`POST ${FORGOT_PASSWORD_PATH}\`).`,
  },
  ACCOUNT_NOT_ACTIVATED: {
    status: 401,
    description: `The e-mail and password are right, but the account was never activated: follow the e-mailed link, or ask for a new one (\`POST ${ACTIVATION_RESEND_PATH}\`).`,
  },
})

/**
 * An activation link followed again after the account became active. It names the field so
 * forms can show it next to the token, and carries no account data: whoever holds an old link
 * learns only that it was used (decision 0014).
 */
export const activationTokenUsed = (): AppError =>
  fail(authErrors.TOKEN_USED, 'This activation link has already been used', [{ field: 'token', message: 'has already been used; log in instead' }])

/** An expired activation link of an account still waiting for activation (decision 0110). */
export const activationTokenExpired = (): AppError =>
  fail(authErrors.TOKEN_EXPIRED, `This activation link has expired; ask for a new one with POST ${ACTIVATION_RESEND_PATH}`, [
    { field: 'token', message: 'has expired; ask for a new link' },
  ])

/** An expired password-reset link; the answer is the same whatever the account (decision 0110). */
export const resetTokenExpired = (): AppError =>
  fail(authErrors.TOKEN_EXPIRED, `This password-reset link has expired; ask for a new one with POST ${FORGOT_PASSWORD_PATH}`, [
    { field: 'token', message: 'has expired; ask for a new link' },
  ])

/** The right password of an account that was never activated (decision 0111). */
export const accountNotActivated = (): AppError =>
  fail(authErrors.ACCOUNT_NOT_ACTIVATED, `This account is not activated yet: follow the link in the activation e-mail, or ask for a new one with POST ${ACTIVATION_RESEND_PATH}`)
