import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const portfolioErrors = defineErrors({
  PORTFOLIO_LIMIT_REACHED: { status: 422, description: 'The portfolio already holds the most records of this kind (100); remove one first.' },
})

export const portfolioLimitReached = (plural: string, limit: number): AppError =>
  fail(portfolioErrors.PORTFOLIO_LIMIT_REACHED, `A portfolio holds at most ${limit} ${plural}; remove one first`)
