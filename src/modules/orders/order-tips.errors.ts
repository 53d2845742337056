import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes of tips (`POST /orders/{orderId}/tip`); clients switch on them, so they never change. */
export const tipErrors = defineErrors({
  NOT_TIPPABLE: { status: 422, description: 'Only the buyer tips, and only a completed order.' },
  ALREADY_TIPPED: { status: 422, description: 'The order has its tip: a buyer tips an order once.' },
  TIP_WINDOW_CLOSED: { status: 422, description: 'More than TIP_DAYS have passed since the order completed.' },
})

export const notTippable = (message: string): AppError => fail(tipErrors.NOT_TIPPABLE, message)
export const alreadyTipped = (): AppError => fail(tipErrors.ALREADY_TIPPED, 'You already tipped this order')
export const tipWindowClosed = (days: number): AppError => fail(tipErrors.TIP_WINDOW_CLOSED, `An order can be tipped within ${days} days of its completion`)
