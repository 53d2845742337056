import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const kycErrors = defineErrors({
  INVALID_TRANSITION: {
    status: 422,
    description: 'The KYC step does not fit the current status: documents before personal details, a submission under review or approved, or a decision on a submission not awaiting review.',
  },
})

export const kycInvalidTransition = (message: string): AppError => fail(kycErrors.INVALID_TRANSITION, message)
