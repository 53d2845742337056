import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const authErrors = defineErrors({
  TOKEN_USED: { status: 400, description: 'The activation link was already used: the account is active, log in instead.' },
})

/**
 * An activation link followed again after the account became active. It names the field so
 * forms can show it next to the token, and carries no account data: whoever holds an old link
 * learns only that it was used (decision 0014).
 */
export const activationTokenUsed = (): AppError =>
  fail(authErrors.TOKEN_USED, 'This activation link has already been used', [{ field: 'token', message: 'has already been used; log in instead' }])
