import type { Db } from '../../db/client.ts'
import { fieldError, type AppError } from '../../lib/errors.ts'
import { hashPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { Account, UsersService } from '../users/users.module.ts'
import { passwordResetEmail } from './auth-emails.ts'
import { INVALID_TOKEN, MAIL_JOBS, recipientOf, type MailJob } from './auth-mail-jobs.ts'
import { resetTokenExpired } from './auth.errors.ts'
import { passwordFingerprint, type ResetClaims, type TokenService } from './tokens.ts'

export interface ResetDeps {
  db: Db
  tokens: TokenService
  users: Pick<UsersService, 'findAccountByEmail' | 'findAccountById' | 'lockAccount' | 'updateAccount'>
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  realtime: Pick<RealtimeHub, 'disconnectUser'>
}

/** The reset token works once, for an active account: its fingerprint names the password it replaces. */
const resetFits = (user: Account | undefined, claims: ResetClaims): user is Account =>
  user !== undefined && user.isActive && user.email === claims.email && passwordFingerprint(user.passwordHash) === claims.pwd

/** A forgotten password: the link by mail, and the new password it sets. */
export function createPasswordReset(deps: ResetDeps) {
  const { db, tokens, users, outbox, mailer, appUrl, realtime } = deps

  /** The refusal of a reset token that does not verify: an expired one is told apart without looking at the account. */
  async function refuseResetToken(token: string): Promise<AppError> {
    return (await tokens.expiredSubject('reset', token)) ? resetTokenExpired() : fieldError('token', INVALID_TOKEN)
  }

  return {
    /**
     * Always answers the same; mails only an active account (decision 0016). Like the activation
     * resend, the request does no lookup: the worker decides.
     */
    async requestPasswordReset(email: string): Promise<{ email: string }> {
      const normalised = normaliseEmail(email)
      await db.transaction((tx) => outbox.add(tx, MAIL_JOBS.passwordReset, { email: normalised }))
      return { email: normalised }
    },

    async resetPassword(token: string, password: string): Promise<{ email: string }> {
      const claims = await tokens.verifyReset(token)
      if (!claims) throw await refuseResetToken(token)
      const passwordHash = await hashPassword(password)
      const reset = await db.transaction(async (tx) => {
        const user = await users.lockAccount(tx, claims.sub)
        if (!resetFits(user, claims)) throw fieldError('token', INVALID_TOKEN)
        await users.updateAccount(tx, user.id, { passwordHash, tokenVersion: user.tokenVersion + 1 })
        return { email: user.email, userId: user.id }
      })
      // Every token issued before the reset is refused now; so are the sockets opened with them.
      await realtime.disconnectUser(reset.userId, 'Password changed')
      return { email: reset.email }
    },

    /** What `resetPassword` would answer about the token, without changing anything: the reset page checks it when it opens. */
    async checkResetToken(token: string): Promise<void> {
      const claims = await tokens.verifyReset(token)
      if (!claims) throw await refuseResetToken(token)
      if (!resetFits(await users.findAccountById(db, claims.sub), claims)) throw fieldError('token', INVALID_TOKEN)
    },

    /** The worker's half of the reset request: only an active account gets mail. */
    async sendPasswordResetEmail(job: MailJob): Promise<void> {
      const user = await recipientOf(db, users, job)
      if (!user?.isActive) return
      const token = await tokens.signReset(user)
      await mailer.send(passwordResetEmail(user, `${appUrl}/reset-password?token=${encodeURIComponent(token)}`))
    },
  }
}
