import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const messagingErrors = defineErrors({
  INVALID_RECIPIENT: { status: 422, description: 'A message cannot be sent to yourself.' },
  TOO_MANY_SOCKETS: {
    status: 429,
    description: 'The chat socket upgrade was refused: the user already holds WS_MAX_SOCKETS_PER_USER open sockets, across every login, device and server. A place frees when one of them closes.',
  },
  RECIPIENT_UNAVAILABLE: {
    status: 422,
    description: 'The other person’s account is suspended or deactivated: no message can be sent to it, in a new conversation or an existing one. Staff accounts can be written to.',
  },
})

export const invalidRecipient = (): AppError => fail(messagingErrors.INVALID_RECIPIENT, 'You cannot send a message to yourself')

export const recipientUnavailable = (): AppError => fail(messagingErrors.RECIPIENT_UNAVAILABLE, 'This account is suspended or deactivated and cannot receive messages')

export const tooManySockets = (limit: number): AppError => fail(messagingErrors.TOO_MANY_SOCKETS, `You already have ${limit} chat sockets open: close one to open another`)
