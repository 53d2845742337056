import { unprocessable, type AppError } from '../../http/errors.ts'

/** Codes this module answers with; clients switch on them, so they never change. */
export const CATEGORY_IN_USE = 'CATEGORY_IN_USE'

export const categoryInUse = (reason: string): AppError => unprocessable(CATEGORY_IN_USE, `The category cannot be deleted: ${reason}`)
