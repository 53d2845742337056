import { AppError } from '../../http/errors.ts'

/**
 * An activation link followed again after the account became active. It names the field so
 * forms can show it next to the token, and carries no account data: whoever holds an old link
 * learns only that it was used (decision 0014).
 */
export const activationTokenUsed = (): AppError =>
  new AppError(400, 'TOKEN_USED', 'This activation link has already been used', [{ field: 'token', message: 'has already been used; log in instead' }])
