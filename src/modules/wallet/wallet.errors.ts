import { defineErrors, fail, type AppError } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const walletErrors = defineErrors({
  INSUFFICIENT_FUNDS: { status: 422, description: 'The available balance does not cover the amount; nothing was moved.' },
  DEPOSITS_UNAVAILABLE: { status: 503, description: 'No payments provider takes deposits on this deployment.' },
})

export const insufficientFunds = (availableCents: number, neededCents: number): AppError =>
  fail(walletErrors.INSUFFICIENT_FUNDS, `The available balance (${fromCents(availableCents).toFixed(2)}) does not cover ${fromCents(neededCents).toFixed(2)}`)
