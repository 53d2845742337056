import { defineErrors, fail, type AppError } from '../../lib/errors.ts'
import { ordersErrors } from './orders.errors.ts'

/** Codes of the resolution center (`/orders/{orderId}/requests`); clients switch on them, so they never change. */
export const requestErrors = defineErrors({
  REQUEST_OPEN: { status: 422, description: 'The order has an open request: it is accepted, declined, withdrawn or expires before another is made.' },
})

export const requestOpen = (): AppError => fail(requestErrors.REQUEST_OPEN, 'The order already has an open request: it must be answered, withdrawn or expire before another is made')

/** 422 INVALID_TRANSITION for a request move the caller may not make now, with the request moves they may make in `details` (field `action`). */
export const invalidRequestMove = (message: string, allowed: string[]): AppError =>
  fail(
    ordersErrors.INVALID_TRANSITION,
    message,
    allowed.map((action) => ({ field: 'action', message: action })),
  )
