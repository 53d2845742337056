import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const messagingErrors = defineErrors({
  INVALID_RECIPIENT: { status: 422, description: 'A message cannot be sent to yourself.' },
})

export const invalidRecipient = (): AppError => fail(messagingErrors.INVALID_RECIPIENT, 'You cannot send a message to yourself')
