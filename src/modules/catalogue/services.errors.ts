import { unprocessable, type AppError } from '../../http/errors.ts'
import type { ServiceStatus } from './services.table.ts'

/** Codes this subject answers with; clients switch on them, so they never change. */
export const INVALID_TRANSITION = 'INVALID_TRANSITION'

const withArticle = (word: string) => `${/^[aeiou]/i.test(word) ? 'An' : 'A'} ${word}`

export const invalidTransition = (from: ServiceStatus, action: string): AppError =>
  unprocessable(INVALID_TRANSITION, `${withArticle(from)} service cannot be ${action}`)
