import { unprocessable, type AppError } from '../../http/errors.ts'

/** Codes this module answers with; clients switch on them, so they never change. */
export const PORTFOLIO_LIMIT_REACHED = 'PORTFOLIO_LIMIT_REACHED'

export const portfolioLimitReached = (plural: string, limit: number): AppError =>
  unprocessable(PORTFOLIO_LIMIT_REACHED, `A portfolio holds at most ${limit} ${plural}; remove one first`)
