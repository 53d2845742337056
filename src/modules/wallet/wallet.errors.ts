import { defineErrors, fail, type AppError } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const walletErrors = defineErrors({
  INSUFFICIENT_FUNDS: { status: 422, description: 'The available balance does not cover the amount; nothing was moved.' },
  DEPOSITS_UNAVAILABLE: { status: 503, description: 'No payments provider takes deposits on this deployment.' },
  KYC_REQUIRED: { status: 422, description: 'Payouts need a verified identity (seller KYC) first.' },
  INVALID_TRANSITION: { status: 422, description: 'The payout is not pending any more: it cannot be approved, rejected or cancelled.' },
  ALREADY_CLEARED: {
    status: 422,
    description: 'Nothing the seller earned from the order is still clearing: it became available to them (or was refunded already), so staff cannot take it back through the ledger.',
  },
})

export const insufficientFunds = (availableCents: number, neededCents: number): AppError =>
  fail(walletErrors.INSUFFICIENT_FUNDS, `The available balance (${fromCents(availableCents).toFixed(2)}) does not cover ${fromCents(neededCents).toFixed(2)}`)

export const kycRequired = (): AppError => fail(walletErrors.KYC_REQUIRED, 'Verify your identity (seller KYC) before asking for a payout')

export const payoutNotPending = (status: string, action: string): AppError => fail(walletErrors.INVALID_TRANSITION, `A ${status} payout cannot be ${action}`)

export const alreadyCleared = (): AppError => fail(walletErrors.ALREADY_CLEARED, 'Nothing the seller earned from this order is still clearing: it is available to them already')
