import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const adminErrors = defineErrors({
  CANNOT_MODIFY_SELF: { status: 422, description: 'Staff cannot change the status of their own account.' },
  NOT_STAFF: { status: 422, description: 'Roles can only be given to staff accounts.' },
  ALREADY_SUSPENDED: { status: 422, description: 'The account is suspended already.' },
  NOT_SUSPENDED: { status: 422, description: 'The account is not suspended.' },
})

export const cannotModifySelf = (): AppError => fail(adminErrors.CANNOT_MODIFY_SELF, 'You cannot change the status of your own account')

export const notStaff = (): AppError => fail(adminErrors.NOT_STAFF, 'Roles can only be given to staff accounts')

export const alreadySuspended = (): AppError => fail(adminErrors.ALREADY_SUSPENDED, 'The account is suspended already')

export const notSuspended = (): AppError => fail(adminErrors.NOT_SUSPENDED, 'The account is not suspended')
