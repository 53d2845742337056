import { Type, type Static } from '@sinclair/typebox'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { burnPasswordCheck, hashPassword, verifyPassword } from '../../lib/passwords.ts'
import { newId } from '../../lib/ids.ts'
import { normaliseEmail } from '../../lib/text.ts'
import { fieldError, unauthenticated, type AppError } from '../../lib/errors.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { isUnchecked, permissions as allPermissions, type AccessClaims, type Actor, type Caller, type Permission, type Session } from '../../access/access.ts'
import type { RolesService } from '../roles/roles.module.ts'
import { toUser, type Account, type User, type UsersService } from '../users/users.module.ts'
import { activationEmail, passwordResetEmail } from './auth-emails.ts'
import { accountNotActivated, activationTokenExpired, activationTokenUsed, resetTokenExpired } from './auth.errors.ts'
import { sql, type SQL } from 'drizzle-orm'
import { createAuthRepository, prepareSessionRead, sessionJsonSql, type SessionJson, type SessionParams } from './auth.repository.ts'
import { passwordFingerprint, TOKEN_LIFETIMES, type ResetClaims, type TokenFamilyRef, type TokenService } from './tokens.ts'

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

export interface Registration {
  email: string
  password: string
  fullName: string
  username?: string
}


export interface TokenPair {
  accessToken: string
  refreshToken: string
}

const INVALID_TOKEN = 'is invalid or has expired'
const INVALID_REFRESH = 'Invalid or expired refresh token'

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

/** The reset token works once, for an active account: its fingerprint names the password it replaces. */
const resetFits = (user: Account | undefined, claims: ResetClaims): user is Account =>
  user !== undefined && user.isActive && user.email === claims.email && passwordFingerprint(user.passwordHash) === claims.pwd

export function createAuthService(deps: {
  db: Db
  clock: Clock
  tokens: TokenService
  users: Pick<UsersService, 'createAccount' | 'describe' | 'findAccountByEmail' | 'findAccountById' | 'lockAccount' | 'recordLogin' | 'updateAccount' | 'identityJsonSql' | 'usableAccountSql'>
  roles: Pick<RolesService, 'permissionsOf'>
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  realtime: Pick<RealtimeHub, 'disconnectSessions' | 'disconnectUser'>
}) {
  const { db, clock, tokens, users, roles, outbox, mailer, appUrl, realtime } = deps
  const sessionSql = sessionJsonSql(users)
  const readSession = prepareSessionRead(sessionSql)

  /** Active, not suspended, and the token predates no password reset or suspension. */
  const isUsable = (user: Account | undefined, version: number): user is Account =>
    user !== undefined && user.isActive && user.suspendedAt === null && user.tokenVersion === version

  const paramsOf = (claims: AccessClaims): SessionParams => ({
    sessionFamily: claims.fam,
    sessionJti: claims.jti,
    sessionUser: claims.sub,
    sessionVersion: claims.ver,
    sessionNow: clock.now().toISOString(),
  })
  const noSession: SessionParams = { sessionFamily: null, sessionJti: null, sessionUser: null, sessionVersion: null, sessionNow: null }

  async function verifyAccess(accessToken: string): Promise<AccessClaims> {
    const claims = await tokens.verifySession('access', accessToken)
    if (!claims) throw unauthenticated('Invalid or expired access token')
    return claims
  }

  /**
   * The session of a verified token as `sessionJsonSql` read it, or 401 when it is not live. A
   * statement that writes in the same go checks the same `live`, so what it wrote and what is
   * answered here never disagree. Staff permissions are read here, for staff only.
   */
  async function confirmSession(claims: AccessClaims, read: SessionJson | null): Promise<Session> {
    if (!read?.live || !read.account) throw unauthenticated('Invalid or expired access token')
    const user = read.account
    const permissions: ReadonlySet<Permission> = user.isSuperuser ? new Set(allPermissions) : user.isStaff ? await roles.permissionsOf(db, user.id) : new Set()
    return {
      actor: { id: user.id, email: user.email, fullName: user.fullName, isStaff: user.isStaff, isSuperuser: user.isSuperuser, permissions },
      jti: claims.jti,
      familyId: claims.fam,
      expiresAt: new Date(claims.exp * 1000),
    }
  }

  async function signPair(user: Account, family: TokenFamilyRef, refreshJti: string): Promise<TokenPair> {
    const [accessToken, refreshToken] = await Promise.all([tokens.signAccess(user, family), tokens.signRefresh(user, family, refreshJti)])
    return { accessToken, refreshToken }
  }

  /**
   * Opens a token family for the account (a login session). Callers decide whether the account
   * may log in. The family lives as long as one refresh token did before rotation (7 days from
   * login): rotation renews tokens, not the session (decision 0013).
   */
  async function issueSession(user: Account): Promise<TokenPair> {
    const now = clock.now()
    const family = { id: newId(), expiresAt: new Date(now.getTime() + TOKEN_LIFETIMES.refresh) }
    const jti = newId()
    await db.transaction(async (tx) => {
      const repository = createAuthRepository(tx)
      await repository.insertFamily({ id: family.id, userId: user.id, createdAt: now, expiresAt: family.expiresAt })
      await repository.insertRefreshToken({ jti, familyId: family.id, issuedAt: now })
    })
    return signPair(user, family, jti)
  }

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

  /** The refusal of a reset token that does not verify: an expired one is told apart without looking at the account. */
  async function refuseResetToken(token: string): Promise<AppError> {
    return (await tokens.expiredSubject('reset', token)) ? resetTokenExpired() : fieldError('token', INVALID_TOKEN)
  }

  const recipientOf = (job: MailJob): Promise<Account | undefined> =>
    job.email !== undefined
      ? users.findAccountByEmail(db, job.email)
      : job.userId !== undefined
        ? users.findAccountById(db, job.userId)
        : Promise.resolve(undefined)

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

    async login(email: string, password: string) {
      const user = await users.findAccountByEmail(db, normaliseEmail(email))
      if (!user) {
        await burnPasswordCheck(password)
        throw unauthenticated('Invalid e-mail or password')
      }
      const matches = await verifyPassword(user.passwordHash, password)
      if (!matches) throw unauthenticated('Invalid e-mail or password')
      // Only after the password proved ownership: the owner learns the account waits for its
      // activation link (decision 0111). An account deactivated by staff answers like a wrong password.
      if (!user.isActive && !user.activatedAt) throw accountNotActivated()
      if (!user.isActive) throw unauthenticated('Invalid e-mail or password')
      // Only the account's owner (who knows the password) learns why they are refused.
      if (user.suspendedAt) throw unauthenticated('This account is suspended')
      const updated = await users.recordLogin(db, user.id)
      const session = await issueSession(updated)
      return { ...session, user: { ...(await users.describe(db, updated)), name: updated.fullName } }
    },

    issueSession,

    /**
     * Rotation with reuse detection (RFC 9700 section 4.14.2): each refresh token works once and
     * is exchanged for a new pair in the same family. A refresh token presented again means two
     * parties hold it, and the server cannot tell which is the thief: the whole family is revoked.
     */
    async refresh(refreshToken: string): Promise<TokenPair> {
      const claims = await tokens.verifySession('refresh', refreshToken)
      if (!claims) throw unauthenticated(INVALID_REFRESH)
      const user = await users.findAccountById(db, claims.sub)
      if (!isUsable(user, claims.ver)) throw unauthenticated(INVALID_REFRESH)
      const now = clock.now()
      const rotated = await db.transaction(async (tx) => {
        const repository = createAuthRepository(tx)
        // The row lock makes the used check and the marking one step: of two requests with one
        // token, the second waits here and then finds it used.
        const presented = await repository.lockRefreshToken(claims.jti)
        if (!presented || presented.familyId !== claims.fam || presented.userId !== user.id) return undefined
        if (presented.revokedAt || presented.expiresAt <= now) return undefined
        if (presented.usedAt) {
          // Committed, not thrown: the revocation must outlive this refused request.
          await repository.revokeFamilies(user.id, [presented.familyId], now)
          return { kind: 'reused' as const, familyId: presented.familyId }
        }
        await repository.markRefreshTokenUsed(presented.jti, now)
        const jti = newId()
        await repository.insertRefreshToken({ jti, familyId: presented.familyId, issuedAt: now })
        return { kind: 'rotated' as const, family: { id: presented.familyId, expiresAt: presented.expiresAt }, jti }
      })
      if (rotated?.kind === 'reused') await realtime.disconnectSessions(user.id, [rotated.familyId], 'Session revoked')
      if (rotated?.kind !== 'rotated') throw unauthenticated(INVALID_REFRESH)
      return signPair(user, rotated.family, rotated.jti)
    },

    /**
     * Ends the caller's session: its family is revoked, so the access token used and every
     * refresh token of the session are refused. A refresh token sent in the body ends its own
     * session too, when it is the caller's.
     */
    async logout(session: Session, refreshToken?: string): Promise<void> {
      const refresh = refreshToken ? await tokens.verifySession('refresh', refreshToken) : undefined
      const families = [session.familyId]
      if (refresh && refresh.sub === session.actor.id && refresh.fam !== session.familyId) families.push(refresh.fam)
      await db.transaction(async (tx) => {
        const repository = createAuthRepository(tx)
        // The jti list predates login sessions (decision 0013); the family already refuses the token.
        await repository.revoke(session.jti, session.expiresAt)
        await repository.revokeFamilies(session.actor.id, families, clock.now())
      })
      // After commit: the ended session's open sockets close with 4401 on every instance.
      await realtime.disconnectSessions(session.actor.id, families, 'Logged out')
    },

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

    async checkEmail(email: string): Promise<{ exists: boolean; email: string }> {
      const normalised = normaliseEmail(email)
      return { exists: (await users.findAccountByEmail(db, normalised)) !== undefined, email: normalised }
    },

    /**
     * Resolves an access token to its caller. The user and the token's family are loaded on every
     * request (one statement), so a deactivated account, a reset password or a revoked
     * session takes effect at once, not when tokens expire.
     */
    async authenticate(accessToken: string): Promise<Session> {
      const claims = await verifyAccess(accessToken)
      return confirmSession(claims, await readSession(db, paramsOf(claims)))
    },

    /** The access token's claims when its signature, kind and expiry hold; 401 otherwise. Its session is not read. */
    verifyAccess,

    /**
     * For a route whose statement reads the session beside its data: the fragment to select
     * (placeholders `SessionParams`), the placeholders' values for a caller (nulls for one already
     * checked), and the actor once the read session is confirmed (401 otherwise).
     */
    sessionCheck: {
      sql: sessionSql,
      /**
       * For a statement that also writes: true when the caller's session is live as read in
       * `session` (the statement's own `sessionSql` column), or the caller was checked already.
       * Gates the write, so a refused session writes nothing.
       */
      liveSql: (session: SQL) => sql<boolean>`(${sql.placeholder('sessionFamily')}::uuid is null or coalesce((${session}->>'live')::boolean, false))`,
      params: (caller: Caller): SessionParams => (isUnchecked(caller) ? paramsOf(caller.claims) : noSession),
      actorOf: async (caller: Caller, read: SessionJson | null): Promise<Actor> =>
        isUnchecked(caller) ? { ...(await confirmSession(caller.claims, read)).actor, requestId: caller.requestId } : caller,
    },

    /** The worker's half of the resend: only an account that was never activated gets mail. */
    async sendActivationEmail(job: MailJob): Promise<void> {
      const user = await recipientOf(job)
      if (!user || user.activatedAt) return
      const token = await tokens.signActivation(user.id)
      await mailer.send(activationEmail(user, `${appUrl}/activate?token=${encodeURIComponent(token)}`))
    },

    /** The worker's half of the reset request: only an active account gets mail. */
    async sendPasswordResetEmail(job: MailJob): Promise<void> {
      const user = await recipientOf(job)
      if (!user?.isActive) return
      const token = await tokens.signReset(user)
      await mailer.send(passwordResetEmail(user, `${appUrl}/reset-password?token=${encodeURIComponent(token)}`))
    },

    purgeRevokedTokens: () => createAuthRepository(db).purgeExpired(clock.now()),
    /** Families past their expiry refuse every token anyway; their rows are only history. */
    purgeTokenFamilies: () => createAuthRepository(db).purgeExpiredFamilies(clock.now()),
  }
}

export type AuthService = ReturnType<typeof createAuthService>
