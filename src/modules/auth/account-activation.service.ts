import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, type AppError } from '../../lib/errors.ts'
import { hashPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { toUser, type Account, type User, type UsersService } from '../users/users.module.ts'
import { activationEmail } from './auth-emails.ts'
import { INVALID_TOKEN, MAIL_JOBS, recipientOf, type MailJob } from './auth-mail-jobs.ts'
import { activationTokenExpired, activationTokenUsed } from './auth.errors.ts'
import type { TokenService } from './tokens.ts'

export interface Registration {
  email: string
  password: string
  fullName: string
  username?: string
}

export interface ActivationDeps {
  db: Db
  clock: Clock
  tokens: TokenService
  users: Pick<UsersService, 'createAccount' | 'findAccountByEmail' | 'findAccountById' | 'lockAccount' | 'updateAccount'>
  outbox: Outbox
  mailer: Mailer
  appUrl: string
}

/**
 * Why a verified activation token cannot activate `user` now, or undefined when it can. A
 * replayed link must not hand out the private profile (decision 0014); an account activated
 * before and inactive now was deactivated by staff, which an old link must not undo.
 */
function activationRefusal(user: Account | undefined): AppError | undefined {
  if (!user) return fieldError('token', INVALID_TOKEN)
  if (user.isActive) return activationTokenUsed()
  if (user.activatedAt) return fieldError('token', INVALID_TOKEN)
  return undefined
}

/** Registration and activation: the account, its activation link by mail, and the link's use. */
export function createAccountActivation(deps: ActivationDeps) {
  const { db, clock, tokens, users, outbox, mailer, appUrl } = deps

  /**
   * The refusal of an activation token that does not verify. A genuine but expired link of an
   * account still waiting says so and where to get a new one (decision 0110); one of an account
   * that is active says to log in, as a used link does; anything else stays "invalid".
   */
  async function refuseActivationToken(token: string): Promise<AppError> {
    const userId = await tokens.expiredSubject('activation', token)
    const user = userId ? await users.findAccountById(db, userId) : undefined
    if (user && !user.isActive && !user.activatedAt) return activationTokenExpired()
    return activationRefusal(user) ?? fieldError('token', INVALID_TOKEN)
  }

  return {
    async register(input: Registration): Promise<User> {
      const passwordHash = await hashPassword(input.password)
      return db.transaction(async (tx) => {
        const user = await users.createAccount(tx, { ...input, email: normaliseEmail(input.email), fullName: input.fullName.trim(), passwordHash })
        await outbox.add(tx, MAIL_JOBS.activation, { userId: user.id })
        return toUser(user)
      })
    },

    async activate(token: string): Promise<User> {
      const userId = await tokens.verifyActivation(token)
      if (!userId) throw await refuseActivationToken(token)
      return db.transaction(async (tx) => {
        // Under the row lock, so a deactivation by staff at the same moment is not overwritten.
        const current = await users.lockAccount(tx, userId)
        const refusal = activationRefusal(current)
        if (refusal) throw refusal
        return toUser(await users.updateAccount(tx, userId, { isActive: true, activatedAt: clock.now() }))
      })
    },

    /**
     * What `activate` would answer, without activating: the activation page checks the link when
     * it opens, so an expired or used one is told at once (a GET never acts: mail scanners follow links).
     */
    async checkActivationToken(token: string): Promise<void> {
      const userId = await tokens.verifyActivation(token)
      if (!userId) throw await refuseActivationToken(token)
      const refusal = activationRefusal(await users.findAccountById(db, userId))
      if (refusal) throw refusal
    },

    /**
     * Always succeeds; only an account that was never activated gets a new link. The request
     * queues the same job for every address and the worker decides, so the answer time does not
     * tell whether the account exists (decision 0016).
     */
    async resendActivation(email: string): Promise<{ email: string }> {
      const normalised = normaliseEmail(email)
      await db.transaction((tx) => outbox.add(tx, MAIL_JOBS.activation, { email: normalised }))
      return { email: normalised }
    },

    /** The worker's half of the resend: only an account that was never activated gets mail. */
    async sendActivationEmail(job: MailJob): Promise<void> {
      const user = await recipientOf(db, users, job)
      if (!user || user.activatedAt) return
      const token = await tokens.signActivation(user.id)
      await mailer.send(activationEmail(user, `${appUrl}/activate?token=${encodeURIComponent(token)}`))
    },
  }
}
