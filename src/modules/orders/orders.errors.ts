import { defineErrors, fail, type AppError } from '../../lib/errors.ts'
import type { OrderStatus, Transition } from './order-status.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const ordersErrors = defineErrors({
  OWN_SERVICE: { status: 422, description: 'A seller cannot order their own service.' },
  INVALID_TRANSITION: {
    status: 422,
    description:
      'The order cannot make this move now, or not by this caller; `details` lists the moves the caller may make (field `status`, message the status; for a request move, field `action`, message the request move).',
  },
})

/** 422 INVALID_TRANSITION with the caller's allowed moves in `details`. */
export function invalidTransition(from: OrderStatus, to: OrderStatus | 'delivered', allowed: Transition[], hint = ''): AppError {
  const targets = [...new Set(allowed.map((transition) => transition.to))]
  const may = targets.length > 0 ? `you may move it to: ${targets.join(', ')}` : 'you may not move it now'
  return fail(
    ordersErrors.INVALID_TRANSITION,
    `A ${from} order cannot move to ${to}${hint}; ${may}`,
    allowed.map((transition) => ({ field: 'status', message: transition.viaDeliver ? `${transition.to} (POST /orders/{orderId}/deliver)` : transition.viaResolve ? `${transition.to} (POST /admin/orders/{orderId}/resolve)` : transition.to })),
  )
}

export const ownService = (): AppError => fail(ordersErrors.OWN_SERVICE, 'You cannot order your own service')
