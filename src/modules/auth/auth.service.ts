import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { burnPasswordCheck, hashPassword, verifyPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import { fieldError, unauthenticated } from '../../http/errors.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { permissions as allPermissions, type Actor, type Permission } from '../roles/permissions.ts'
import type { RolesService } from '../roles/roles.service.ts'
import { toUser, type Account, type User, type UsersService } from '../users/users.service.ts'
import { activationEmail, passwordResetEmail } from './auth-emails.ts'
import { createAuthRepository } from './auth.repository.ts'
import { passwordFingerprint, type TokenService } from './tokens.ts'

export const MAIL_TOPICS = { activation: 'mail.activation', passwordReset: 'mail.password_reset' } as const

export interface Registration {
  email: string
  password: string
  fullName: string
  username?: string
}

/** The authenticated caller plus the token they presented (needed to revoke it at logout). */
export interface Session {
  actor: Actor
  jti: string
  expiresAt: Date
}

const INVALID_TOKEN = 'is invalid or has expired'

export function createAuthService(deps: {
  db: Db
  clock: Clock
  tokens: TokenService
  users: Pick<UsersService, 'createAccount' | 'describe' | 'findAccountByEmail' | 'findAccountById' | 'lockAccount' | 'recordLogin' | 'updateAccount'>
  roles: Pick<RolesService, 'permissionsOf'>
  outbox: Outbox
  mailer: Mailer
  appUrl: string
}) {
  const { db, clock, tokens, users, roles, outbox, mailer, appUrl } = deps

  const isUsable = (user: Account | undefined, version: number): user is Account =>
    user !== undefined && user.isActive && user.tokenVersion === version

  async function issueSession(user: Account) {
    const [accessToken, refreshToken] = await Promise.all([tokens.signAccess(user), tokens.signRefresh(user)])
    return { accessToken, refreshToken }
  }

  return {
    async register(input: Registration): Promise<User> {
      const passwordHash = await hashPassword(input.password)
      return db.transaction(async (tx) => {
        const user = await users.createAccount(tx, { ...input, email: normaliseEmail(input.email), fullName: input.fullName.trim(), passwordHash })
        await outbox.enqueue(tx, { topic: MAIL_TOPICS.activation, payload: { userId: user.id } })
        return toUser(user)
      })
    },

    async activate(token: string): Promise<User> {
      const userId = await tokens.verifyActivation(token)
      const user = userId ? await users.findAccountById(userId) : undefined
      if (!user) throw fieldError('token', INVALID_TOKEN)
      return db.transaction(async (tx) => {
        // Under the row lock, so a deactivation by staff at the same moment is not overwritten.
        const current = (await users.lockAccount(tx, user.id))!
        if (current.isActive) return toUser(current)
        // Activated before and inactive now means staff deactivated it: an old link must not undo that.
        if (current.activatedAt) throw fieldError('token', INVALID_TOKEN)
        return toUser(await users.updateAccount(tx, current.id, { isActive: true, activatedAt: clock.now() }))
      })
    },

    /** Always succeeds; only an account that was never activated gets a new link. */
    async resendActivation(email: string): Promise<{ email: string }> {
      const normalised = normaliseEmail(email)
      const user = await users.findAccountByEmail(normalised)
      if (user && !user.activatedAt) {
        await db.transaction((tx) => outbox.enqueue(tx, { topic: MAIL_TOPICS.activation, payload: { userId: user.id } }))
      }
      return { email: normalised }
    },

    async login(email: string, password: string) {
      const user = await users.findAccountByEmail(normaliseEmail(email))
      if (!user) {
        await burnPasswordCheck(password)
        throw unauthenticated('Invalid e-mail or password')
      }
      const matches = await verifyPassword(user.passwordHash, password)
      // Spec 5.3: an inactive account answers exactly like a wrong password.
      if (!matches || !user.isActive) throw unauthenticated('Invalid e-mail or password')
      const updated = await users.recordLogin(user.id)
      const session = await issueSession(updated)
      return { ...session, user: { ...(await users.describe(updated)), name: updated.fullName } }
    },

    async refresh(refreshToken: string): Promise<{ accessToken: string }> {
      const claims = await tokens.verifySession('refresh', refreshToken)
      if (!claims || (await createAuthRepository(db).isRevoked(claims.jti))) throw unauthenticated('Invalid or expired refresh token')
      const user = await users.findAccountById(claims.sub)
      if (!isUsable(user, claims.ver)) throw unauthenticated('Invalid or expired refresh token')
      return { accessToken: await tokens.signAccess(user) }
    },

    /** Revokes the presented access token and, when given and owned by the caller, the refresh token. */
    async logout(session: Session, refreshToken?: string): Promise<void> {
      const refresh = refreshToken ? await tokens.verifySession('refresh', refreshToken) : undefined
      await db.transaction(async (tx) => {
        const repository = createAuthRepository(tx)
        await repository.revoke(session.jti, session.expiresAt)
        if (refresh && refresh.sub === session.actor.id) await repository.revoke(refresh.jti, new Date(refresh.exp * 1000))
      })
    },

    /** Always answers the same; mails only an active account (spec 5.9). */
    async requestPasswordReset(email: string): Promise<{ email: string }> {
      const normalised = normaliseEmail(email)
      const user = await users.findAccountByEmail(normalised)
      if (user?.isActive) {
        await db.transaction((tx) => outbox.enqueue(tx, { topic: MAIL_TOPICS.passwordReset, payload: { userId: user.id } }))
      }
      return { email: normalised }
    },

    async resetPassword(token: string, password: string): Promise<{ email: string }> {
      const claims = await tokens.verifyReset(token)
      if (!claims) throw fieldError('token', INVALID_TOKEN)
      const passwordHash = await hashPassword(password)
      return db.transaction(async (tx) => {
        const user = await users.lockAccount(tx, claims.sub)
        // The fingerprint ties the token to the password it was issued for: it works once.
        if (!user?.isActive || user.email !== claims.email || passwordFingerprint(user.passwordHash) !== claims.pwd) {
          throw fieldError('token', INVALID_TOKEN)
        }
        await users.updateAccount(tx, user.id, { passwordHash, tokenVersion: user.tokenVersion + 1 })
        return { email: user.email }
      })
    },

    async checkEmail(email: string): Promise<{ exists: boolean; email: string }> {
      const normalised = normaliseEmail(email)
      return { exists: (await users.findAccountByEmail(normalised)) !== undefined, email: normalised }
    },

    /**
     * Resolves an access token to its caller. The user is loaded on every request, so a
     * deactivated account or a reset password takes effect at once, not when tokens expire.
     */
    async authenticate(accessToken: string): Promise<Session> {
      const claims = await tokens.verifySession('access', accessToken)
      if (!claims) throw unauthenticated('Invalid or expired access token')
      const [user, revoked] = await Promise.all([users.findAccountById(claims.sub), createAuthRepository(db).isRevoked(claims.jti)])
      if (revoked || !isUsable(user, claims.ver)) throw unauthenticated('Invalid or expired access token')
      const permissions: ReadonlySet<Permission> = user.isSuperuser
        ? new Set(allPermissions)
        : user.isStaff
          ? await roles.permissionsOf(user.id)
          : new Set()
      return {
        actor: { id: user.id, email: user.email, fullName: user.fullName, isStaff: user.isStaff, isSuperuser: user.isSuperuser, permissions },
        jti: claims.jti,
        expiresAt: new Date(claims.exp * 1000),
      }
    },

    async sendActivationEmail(userId: string): Promise<void> {
      const user = await users.findAccountById(userId)
      if (!user || user.activatedAt) return
      const token = await tokens.signActivation(user.id)
      await mailer.send(activationEmail(user, `${appUrl}/activate?token=${encodeURIComponent(token)}`))
    },

    async sendPasswordResetEmail(userId: string): Promise<void> {
      const user = await users.findAccountById(userId)
      if (!user?.isActive) return
      const token = await tokens.signReset(user)
      await mailer.send(passwordResetEmail(user, `${appUrl}/reset-password?token=${encodeURIComponent(token)}`))
    },

    purgeRevokedTokens: () => createAuthRepository(db).purgeExpired(clock.now()),
  }
}

export type AuthService = ReturnType<typeof createAuthService>
