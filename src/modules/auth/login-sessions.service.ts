import type { Session } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { unauthenticated } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { burnPasswordCheck, verifyPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { Account, UsersService } from '../users/users.module.ts'
import { accountNotActivated } from './auth.errors.ts'
import { createAuthRepository } from './auth.repository.ts'
import { TOKEN_LIFETIMES, type TokenFamilyRef, type TokenService } from './tokens.ts'

export interface TokenPair {
  accessToken: string
  refreshToken: string
}

export interface LoginDeps {
  db: Db
  clock: Clock
  tokens: TokenService
  users: Pick<UsersService, 'describe' | 'findAccountByEmail' | 'findAccountById' | 'recordLogin'>
  realtime: Pick<RealtimeHub, 'disconnectSessions'>
}

const INVALID_REFRESH = 'Invalid or expired refresh token'

/** Active, not suspended, and the token predates no password reset or suspension. */
const isUsable = (user: Account | undefined, version: number): user is Account =>
  user !== undefined && user.isActive && user.suspendedAt === null && user.tokenVersion === version

/** Login sessions (token families): login, refresh with rotation, logout, and their purge. */
export function createLoginSessions(deps: LoginDeps) {
  const { db, clock, tokens, users, realtime } = deps

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

  return {
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

    purgeRevokedTokens: () => createAuthRepository(db).purgeExpired(clock.now()),
    /** Families past their expiry refuse every token anyway; their rows are only history. */
    purgeTokenFamilies: () => createAuthRepository(db).purgeExpiredFamilies(clock.now()),
  }
}
