import { defineErrors, fail, type AppError } from '../../lib/errors.ts'
import type { ServiceStatus } from './services.table.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const catalogueErrors = defineErrors({
  INVALID_TRANSITION: { status: 422, description: 'The service is not in a state that allows this move (approve a pending service, pause an active one, ...).' },
  SERVICE_HAS_OPEN_ORDERS: { status: 422, description: 'The service has orders under way (pending, in progress, delivered or disputed), so it cannot be deleted yet; pause it instead.' },
  CATEGORY_IN_USE: { status: 422, description: 'The category still has subcategories or services, so it cannot be deleted.' },
})

const withArticle = (word: string) => `${/^[aeiou]/i.test(word) ? 'An' : 'A'} ${word}`

export const invalidTransition = (from: ServiceStatus, action: string): AppError =>
  fail(catalogueErrors.INVALID_TRANSITION, `${withArticle(from)} service cannot be ${action}`)

export const categoryInUse = (reason: string): AppError => fail(catalogueErrors.CATEGORY_IN_USE, `The category cannot be deleted: ${reason}`)

export const serviceHasOpenOrders = (count: number): AppError =>
  fail(catalogueErrors.SERVICE_HAS_OPEN_ORDERS, `The service has ${count} open order${count === 1 ? '' : 's'}; finish or cancel ${count === 1 ? 'it' : 'them'} first, or pause the service`)
