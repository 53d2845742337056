import { Type, type Static } from '@sinclair/typebox'
import type { Db } from '../../db/client.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Account, UsersService } from '../users/users.module.ts'

/**
 * The payload of a mail job. Registration names the account it just created; the public
 * "send me a link" routes carry only the e-mail as typed, and the worker looks it up.
 */
const MailJobPayload = Type.Object({ userId: Type.Optional(Type.String()), email: Type.Optional(Type.String()) })
export type MailJob = Static<typeof MailJobPayload>

export const MAIL_JOBS = {
  activation: defineJob('mail.activation', MailJobPayload),
  passwordReset: defineJob('mail.password_reset', MailJobPayload),
}

/** The account a mail job is for, looked up when the worker runs it. */
export const recipientOf = (db: Db, users: Pick<UsersService, 'findAccountByEmail' | 'findAccountById'>, job: MailJob): Promise<Account | undefined> =>
  job.email !== undefined ? users.findAccountByEmail(db, job.email) : job.userId !== undefined ? users.findAccountById(db, job.userId) : Promise.resolve(undefined)

/** Why a token field is refused when nothing more may be said. */
export const INVALID_TOKEN = 'is invalid or has expired'
