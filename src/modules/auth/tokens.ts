import { createHash, createHmac, randomUUID } from 'node:crypto'
import { createSigner, createVerifier } from 'fast-jwt'
import type { Clock } from '../../lib/clock.ts'
import { DAY, HOUR, MINUTE } from '../../lib/clock.ts'

export type TokenKind = 'access' | 'refresh' | 'activation' | 'reset'

/** A verified token's payload: registered claims and ours, of types still to check. */
type Claims = Record<string, unknown> & { sub?: unknown; exp?: unknown; iat?: unknown; nbf?: unknown; jti?: unknown }

export const TOKEN_LIFETIMES: Record<TokenKind, number> = {
  access: 15 * MINUTE,
  refresh: 7 * DAY,
  activation: 24 * HOUR,
  reset: 1 * HOUR,
}

export interface SessionClaims {
  sub: string
  email: string
  fullName: string
  jti: string
  /** The user's token version when issued; a password reset bumps it and retires the token. */
  ver: number
  /** The token family (login session) the token belongs to; revoking the family refuses it. */
  fam: string
  exp: number
}

/** The family a session token is issued in: no token of it outlives the family. */
export interface TokenFamilyRef {
  id: string
  expiresAt: Date
}

export interface ResetClaims {
  sub: string
  email: string
  /** Fingerprint of the password hash when issued: once the password changes, the token is spent. */
  pwd: string
}

const derive = (secret: string, purpose: string) => createHmac('sha256', secret).update(`marketplace:${purpose}`).digest()

/**
 * Each kind's keys, the signing one first. Tokens are signed with the current secret; during a
 * rotation (docs/operations.md) the previous one still verifies, so nobody is logged out when the
 * secret changes.
 */
function keysOf(secrets: JwtSecrets): Record<TokenKind, Buffer[]> {
  const accessSecrets = [secrets.accessSecret, ...(secrets.previousAccessSecret ? [secrets.previousAccessSecret] : [])]
  const refreshSecrets = [secrets.refreshSecret, ...(secrets.previousRefreshSecret ? [secrets.previousRefreshSecret] : [])]
  return {
    access: accessSecrets.map((secret) => derive(secret, 'access')),
    refresh: refreshSecrets.map((secret) => derive(secret, 'refresh')),
    activation: accessSecrets.map((secret) => derive(secret, 'activation')),
    reset: accessSecrets.map((secret) => derive(secret, 'password-reset')),
  }
}

const typOf = (kind: TokenKind) => `${kind}+jwt`

const resetClaimsOf = (payload: Claims): ResetClaims | undefined =>
  typeof payload.email === 'string' && typeof payload.pwd === 'string' && typeof payload.sub === 'string' && payload.sub
    ? { sub: payload.sub, email: payload.email, pwd: payload.pwd }
    : undefined

const isSession = (payload: Claims): payload is Claims & SessionClaims =>
  typeof payload.sub === 'string' &&
  typeof payload.email === 'string' &&
  typeof payload.jti === 'string' &&
  typeof payload.ver === 'number' &&
  typeof payload.fam === 'string'

/**
 * Each kind has its own key and its own `typ` header, so a token is accepted only where it
 * belongs (RFC 8725 section 3.11): a refresh token is no access token, an activation token
 * resets no password. The algorithm is pinned, so `alg: none` and asymmetric confusion fail.
 */
export function createTokenService(secrets: JwtSecrets, clock: Clock) {
  const keys = keysOf(secrets)
  // fast-jwt signs and verifies with node:crypto, synchronously: a few microseconds where a
  // WebCrypto verify costs tens and a thread-pool round trip, on every authenticated request.
  const signers = Object.fromEntries(
    Object.entries(keys).map(([kind, [current]]) => [kind, createSigner({ key: current!, algorithm: 'HS256', header: { alg: 'HS256', typ: typOf(kind as TokenKind) } })]),
  ) as Record<TokenKind, (payload: Record<string, unknown>) => string>
  // Time is checked below against the injected clock, so the verifiers leave exp and nbf alone.
  const verifiers = Object.fromEntries(
    Object.entries(keys).map(([kind, list]) => [
      kind,
      list.map((key) => createVerifier({ key, algorithms: ['HS256'], checkTyp: typOf(kind as TokenKind), requiredClaims: ['sub', 'exp', 'iat', 'jti'], ignoreExpiration: true, ignoreNotBefore: true })),
    ]),
  ) as Record<TokenKind, ((token: string) => Claims)[]>

  async function sign(kind: TokenKind, subject: string, claims: Record<string, unknown>, options: { jti?: string; notAfter?: Date } = {}): Promise<string> {
    const issuedAt = Math.floor(clock.now().getTime() / 1000)
    const lifetimeEnd = issuedAt + TOKEN_LIFETIMES[kind] / 1000
    const expiresAt = options.notAfter ? Math.min(lifetimeEnd, Math.floor(options.notAfter.getTime() / 1000)) : lifetimeEnd
    return signers[kind]({ ...claims, sub: subject, jti: options.jti ?? randomUUID(), iat: issuedAt, exp: expiresAt })
  }

  /**
   * The payload of a token signed with one of this kind's keys, with whether its lifetime is over;
   * undefined for anything else (another kind, a foreign key, garbage, no expiry).
   */
  function read(kind: TokenKind, token: string): { payload: Claims; isExpired: boolean } | undefined {
    for (const verifier of verifiers[kind]) {
      let payload: Claims
      try {
        payload = verifier(token)
      } catch (error) {
        // Only a signature made with another key is worth trying the next key for.
        if ((error as { code?: string }).code === 'FAST_JWT_INVALID_SIGNATURE') continue
        return undefined
      }
      if (typeof payload.exp !== 'number' || typeof payload.iat !== 'number') return undefined
      return { payload, isExpired: payload.exp <= clock.now().getTime() / 1000 }
    }
    return undefined
  }

  /** Returns the payload, or undefined for any token that is not a valid, unexpired token of this kind. */
  async function verify(kind: TokenKind, token: string): Promise<Claims | undefined> {
    const found = read(kind, token)
    if (!found || found.isExpired) return undefined
    const { nbf } = found.payload
    const now = clock.now().getTime() / 1000
    return nbf === undefined || (typeof nbf === 'number' && nbf <= now) ? found.payload : undefined
  }

  return {
    signAccess: (user: UserIdentity, family: TokenFamilyRef) =>
      sign('access', user.id, sessionClaims(user, family), { notAfter: family.expiresAt }),
    /** `jti` is given when the caller records it (the family's list of refresh tokens). */
    signRefresh: (user: UserIdentity, family: TokenFamilyRef, jti?: string) =>
      sign('refresh', user.id, sessionClaims(user, family), { jti, notAfter: family.expiresAt }),
    signActivation: (userId: string) => sign('activation', userId, {}),
    signReset: (user: { id: string; email: string; passwordHash: string }) =>
      sign('reset', user.id, { email: user.email, pwd: passwordFingerprint(user.passwordHash) }),

    async verifySession(kind: 'access' | 'refresh', token: string): Promise<SessionClaims | undefined> {
      const payload = await verify(kind, token)
      return payload && isSession(payload) ? payload : undefined
    },
    async verifyActivation(token: string): Promise<string | undefined> {
      const subject = (await verify('activation', token))?.sub
      return typeof subject === 'string' ? subject : undefined
    },
    async verifyReset(token: string): Promise<ResetClaims | undefined> {
      const payload = await verify('reset', token)
      return payload && resetClaimsOf(payload)
    },
    /**
     * The subject of a link token this service signed whose lifetime is over, so the refusal can
     * say "expired, ask for a new one" instead of "invalid"; undefined for any other token,
     * including a forged or garbled one.
     */
    async expiredSubject(kind: 'activation' | 'reset', token: string): Promise<string | undefined> {
      const found = read(kind, token)
      if (!found?.isExpired) return undefined
      if (kind === 'reset') return resetClaimsOf(found.payload)?.sub
      return typeof found.payload.sub === 'string' && found.payload.sub ? found.payload.sub : undefined
    },
  }
}

export type TokenService = ReturnType<typeof createTokenService>

/** The signing secrets, and during a rotation the ones they replace (accepted, never used to sign). */
export interface JwtSecrets {
  accessSecret: string
  refreshSecret: string
  previousAccessSecret?: string
  previousRefreshSecret?: string
}

interface UserIdentity {
  id: string
  email: string
  fullName: string
  tokenVersion: number
}

const sessionClaims = (user: UserIdentity, family: TokenFamilyRef) => ({ email: user.email, fullName: user.fullName, ver: user.tokenVersion, fam: family.id })

export const passwordFingerprint = (passwordHash: string): string => createHash('sha256').update(passwordHash).digest('base64url').slice(0, 22)
