import { createHmac, randomBytes } from 'node:crypto'
import { SignJWT, decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose'
import { describe, expect, it } from 'vitest'
import { ManualClock, SECOND } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { TOKEN_LIFETIMES, createTokenService, passwordFingerprint, type TokenKind, type TokenService } from './tokens.ts'

const SECRETS = { accessSecret: 'unit-access-secret-0123456789-abcdefghij', refreshSecret: 'unit-refresh-secret-0123456789-abcdefghij' }
const START = '2030-01-01T00:00:00.000Z'
const KINDS: TokenKind[] = ['access', 'refresh', 'activation', 'reset']

const identity = { id: newId(), email: 'ana.gomez@example.test', fullName: 'Ana Gómez', tokenVersion: 3 }
/** A session that outlives every token lifetime, so only the kind's own lifetime applies. */
const family = { id: newId(), expiresAt: new Date('2031-01-01T00:00:00.000Z') }
const PASSWORD_HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA'
const account = { id: identity.id, email: identity.email, passwordHash: PASSWORD_HASH }

function setup(secrets = SECRETS, clock = new ManualClock(START)) {
  return { clock, tokens: createTokenService(secrets, clock) }
}

const sign = (tokens: TokenService, kind: TokenKind): Promise<string> =>
  ({
    access: () => tokens.signAccess(identity, family),
    refresh: () => tokens.signRefresh(identity, family),
    activation: () => tokens.signActivation(identity.id),
    reset: () => tokens.signReset(account),
  })[kind]()

/** Whether `token` is accepted as a token of `kind`; every verifier answers undefined when it refuses. */
async function accepts(tokens: TokenService, kind: TokenKind, token: string): Promise<boolean> {
  const verified = await {
    access: () => tokens.verifySession('access', token),
    refresh: () => tokens.verifySession('refresh', token),
    activation: () => tokens.verifyActivation(token),
    reset: () => tokens.verifyReset(token),
  }[kind]()
  return verified !== undefined
}

const base64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** The same header and claims as `token`, re-encoded with `alg: none` and no signature. */
function unsignedCopy(token: string): string {
  const header = decodeProtectedHeader(token)
  return `${base64url({ ...header, alg: 'none' })}.${base64url(decodeJwt(token))}.`
}

/** The same header and claims as `token`, signed with a key the service never saw. */
function foreignCopy(token: string): Promise<string> {
  const header = decodeProtectedHeader(token)
  return new SignJWT(decodeJwt(token)).setProtectedHeader({ alg: 'HS256', typ: header.typ }).sign(randomBytes(32))
}

const pairs = KINDS.flatMap((signedAs) => KINDS.map((verifiedAs) => ({ signedAs, verifiedAs, accepted: signedAs === verifiedAs })))

describe('createTokenService', () => {
  describe('each kind is accepted only as its own kind', () => {
    it.each(pairs)('the $signedAs token verified as $verifiedAs is accepted: $accepted', async ({ signedAs, verifiedAs, accepted }) => {
      const { tokens } = setup()
      const token = await sign(tokens, signedAs)
      expect(await accepts(tokens, verifiedAs, token)).toBe(accepted)
    })
  })

  describe('lifetimes', () => {
    it.each(KINDS)('gives the %s token an expiry of its lifetime from now', async (kind) => {
      const { clock, tokens } = setup()
      const claims = decodeJwt(await sign(tokens, kind))
      const now = clock.now().getTime() / 1000
      expect(claims.iat).toBe(now)
      expect(claims.exp).toBe(now + TOKEN_LIFETIMES[kind] / 1000)
    })

    it.each(KINDS)('accepts the %s token one second before its lifetime ends and refuses it one second after', async (kind) => {
      const { clock, tokens } = setup()
      const token = await sign(tokens, kind)
      clock.advance(TOKEN_LIFETIMES[kind] - SECOND)
      expect(await accepts(tokens, kind, token)).toBe(true)
      clock.advance(2 * SECOND)
      expect(await accepts(tokens, kind, token)).toBe(false)
    })

    it('uses the documented lifetimes: 15 min, 7 days, 24 h, 1 h', () => {
      expect(TOKEN_LIFETIMES).toEqual({ access: 15 * 60_000, refresh: 7 * 86_400_000, activation: 24 * 3_600_000, reset: 3_600_000 })
    })
  })

  describe('forged and damaged tokens', () => {
    it.each(KINDS)('refuses a copy of a valid %s token re-encoded with alg "none" and no signature', async (kind) => {
      const { tokens } = setup()
      const forged = unsignedCopy(await sign(tokens, kind))
      expect(decodeProtectedHeader(forged)).toMatchObject({ alg: 'none', typ: `${kind}+jwt` })
      expect(await accepts(tokens, kind, forged)).toBe(false)
    })

    it.each(KINDS)('refuses a copy of a valid %s token with the right type header signed by a foreign key', async (kind) => {
      const { tokens } = setup()
      const forged = await foreignCopy(await sign(tokens, kind))
      expect(decodeProtectedHeader(forged)).toMatchObject({ alg: 'HS256', typ: `${kind}+jwt` })
      expect(await accepts(tokens, kind, forged)).toBe(false)
    })

    it.each(KINDS)('refuses a valid %s token whose payload was altered after signing', async (kind) => {
      const { tokens } = setup()
      const token = await sign(tokens, kind)
      const [header, , signature] = token.split('.')
      const altered = `${header}.${base64url({ ...decodeJwt(token), sub: newId() })}.${signature}`
      expect(await accepts(tokens, kind, altered)).toBe(false)
    })

    it.each(KINDS)('refuses malformed input in place of the %s token without throwing', async (kind) => {
      const { tokens } = setup()
      for (const input of ['', 'garbage', 'a.b.c', '..', 'eyJhbGciOiJIUzI1NiJ9.e30.']) {
        expect(await accepts(tokens, kind, input)).toBe(false)
      }
    })

    it('pins the algorithm to HS256 and names the kind in the typ header', async () => {
      const { tokens } = setup()
      for (const kind of KINDS) {
        expect(decodeProtectedHeader(await sign(tokens, kind))).toEqual({ alg: 'HS256', typ: `${kind}+jwt` })
      }
    })
  })

  describe('secrets', () => {
    it('signs access and refresh tokens with distinct secrets: changing one secret retires only its tokens', async () => {
      const { tokens, clock } = setup()
      const access = await tokens.signAccess(identity, family)
      const refresh = await tokens.signRefresh(identity, family)
      const newRefreshSecret = createTokenService({ ...SECRETS, refreshSecret: 'another-refresh-secret-0123456789-abcdef' }, clock)
      expect(await accepts(newRefreshSecret, 'access', access)).toBe(true)
      expect(await accepts(newRefreshSecret, 'refresh', refresh)).toBe(false)
      const newAccessSecret = createTokenService({ ...SECRETS, accessSecret: 'another-access-secret-0123456789-abcdefg' }, clock)
      expect(await accepts(newAccessSecret, 'access', access)).toBe(false)
      expect(await accepts(newAccessSecret, 'refresh', refresh)).toBe(true)
    })

    it('refuses every kind signed by a service with other secrets', async () => {
      const { tokens, clock } = setup()
      const other = createTokenService({ accessSecret: 'x'.repeat(40), refreshSecret: 'y'.repeat(40) }, clock)
      for (const kind of KINDS) expect(await accepts(tokens, kind, await sign(other, kind))).toBe(false)
    })

    it('during a rotation accepts tokens of the previous secrets and signs with the new ones only', async () => {
      const { tokens: before, clock } = setup()
      const rotated = { accessSecret: 'rotated-access-secret-0123456789-abcdefg', refreshSecret: 'rotated-refresh-secret-0123456789-abcdef' }
      const during = createTokenService({ ...rotated, previousAccessSecret: SECRETS.accessSecret, previousRefreshSecret: SECRETS.refreshSecret }, clock)
      const after = createTokenService(rotated, clock)
      for (const kind of KINDS) {
        const old = await sign(before, kind)
        expect(await accepts(during, kind, old), kind).toBe(true)
        expect(await accepts(after, kind, old), kind).toBe(false)
        const fresh = await sign(during, kind)
        expect(await accepts(after, kind, fresh), kind).toBe(true)
        expect(await accepts(before, kind, fresh), kind).toBe(false)
      }
    })

    it('still refuses an expired token of the previous secret, and a token of one kind as another', async () => {
      const { tokens: before, clock } = setup()
      const during = createTokenService({ accessSecret: 'z'.repeat(40), refreshSecret: 'w'.repeat(40), previousAccessSecret: SECRETS.accessSecret, previousRefreshSecret: SECRETS.refreshSecret }, clock)
      const access = await before.signAccess(identity, family)
      expect(await accepts(during, 'refresh', access)).toBe(false)
      clock.advance(TOKEN_LIFETIMES.access + SECOND)
      expect(await accepts(during, 'access', access)).toBe(false)
    })
  })

  describe('claims', () => {
    it.each(['access', 'refresh'] as const)('the %s token carries sub, email, fullName, token version, its family and a unique jti', async (kind) => {
      const { tokens } = setup()
      const first = await sign(tokens, kind)
      const second = await sign(tokens, kind)
      const claims = await tokens.verifySession(kind, first)
      expect(claims).toMatchObject({ sub: identity.id, email: identity.email, fullName: identity.fullName, ver: 3, fam: family.id })
      expect(claims?.jti).toEqual(expect.any(String))
      expect((await tokens.verifySession(kind, second))?.jti).not.toBe(claims?.jti)
    })

    it('a refresh token carries the jti it was given, so the family can record it before it is sent', async () => {
      const { tokens } = setup()
      const jti = newId()
      expect((await tokens.verifySession('refresh', await tokens.signRefresh(identity, family, jti)))?.jti).toBe(jti)
    })

    it.each(['access', 'refresh'] as const)('the %s token expires with its family when the family ends before its own lifetime', async (kind) => {
      const { clock, tokens } = setup()
      const ending = { id: newId(), expiresAt: new Date(clock.now().getTime() + 5 * SECOND) }
      const token = await (kind === 'access' ? tokens.signAccess(identity, ending) : tokens.signRefresh(identity, ending))
      expect(decodeJwt(token).exp).toBe(ending.expiresAt.getTime() / 1000)
      clock.advance(6 * SECOND)
      expect(await accepts(tokens, kind, token)).toBe(false)
    })

    it.each(['access', 'refresh'] as const)('refuses a well-signed %s token without a family (issued before families existed)', async (kind) => {
      const { tokens } = setup()
      const key = createHmac('sha256', kind === 'access' ? SECRETS.accessSecret : SECRETS.refreshSecret).update(`marketplace:${kind}`).digest()
      const resign = (claims: JWTPayload) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: `${kind}+jwt` }).sign(key)
      const claims = decodeJwt(await sign(tokens, kind))
      // Re-signed as it is, it is accepted: only the missing claim below makes the difference.
      expect(await tokens.verifySession(kind, await resign(claims))).toBeDefined()
      delete claims.fam
      expect(await tokens.verifySession(kind, await resign(claims))).toBeUndefined()
    })

    it('an activation token names the user id as its subject and nothing else about the user', async () => {
      const { tokens } = setup()
      const token = await tokens.signActivation(identity.id)
      expect(await tokens.verifyActivation(token)).toBe(identity.id)
      expect(decodeJwt(token)).not.toHaveProperty('email')
    })

    it('a reset token carries the e-mail and a fingerprint of the current password hash, not the hash', async () => {
      const { tokens } = setup()
      const token = await tokens.signReset(account)
      expect(await tokens.verifyReset(token)).toEqual({ sub: identity.id, email: identity.email, pwd: passwordFingerprint(PASSWORD_HASH) })
      expect(JSON.stringify(decodeJwt(token))).not.toContain(PASSWORD_HASH)
    })

    it.each(['activation', 'reset'] as const)('names the subject of a genuine %s token only once its lifetime is over, never of a forged or other-kind one', async (kind) => {
      const { clock, tokens } = setup()
      const token = await sign(tokens, kind)
      const forged = await foreignCopy(token)
      const otherKind = await sign(tokens, kind === 'activation' ? 'reset' : 'activation')
      expect(await tokens.expiredSubject(kind, token)).toBeUndefined()
      clock.advance(TOKEN_LIFETIMES[kind] + SECOND)
      expect(await tokens.expiredSubject(kind, token)).toBe(identity.id)
      expect(await accepts(tokens, kind, token)).toBe(false)
      for (const refused of [forged, otherKind, unsignedCopy(token), 'garbage']) expect(await tokens.expiredSubject(kind, refused)).toBeUndefined()
    })

    it('the password fingerprint changes when the password hash changes', () => {
      const fingerprint = passwordFingerprint(PASSWORD_HASH)
      expect(fingerprint).toMatch(/^[A-Za-z0-9_-]{22}$/)
      expect(passwordFingerprint(PASSWORD_HASH)).toBe(fingerprint)
      expect(passwordFingerprint(`${PASSWORD_HASH}x`)).not.toBe(fingerprint)
    })
  })
})
