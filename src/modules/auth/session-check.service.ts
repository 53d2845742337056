import { sql, type SQL } from 'drizzle-orm'
import { isUnchecked, permissions as allPermissions, type AccessClaims, type Actor, type Caller, type Permission, type Session } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { unauthenticated } from '../../lib/errors.ts'
import type { RolesService } from '../roles/roles.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { prepareSessionRead, sessionJsonSql, type SessionJson, type SessionParams } from './auth.repository.ts'
import type { TokenService } from './tokens.ts'

export interface SessionCheckDeps {
  db: Db
  clock: Clock
  tokens: TokenService
  users: Pick<UsersService, 'identityJsonSql' | 'usableAccountSql'>
  roles: Pick<RolesService, 'permissionsOf'>
}

const noSession: SessionParams = { sessionFamily: null, sessionJti: null, sessionUser: null, sessionVersion: null, sessionNow: null }

/** The caller of every request: an access token resolved to its live session, alone or inside a route's own statement. */
export function createSessionChecks(deps: SessionCheckDeps) {
  const { db, clock, tokens, users, roles } = deps
  const sessionSql = sessionJsonSql(users)
  const readSession = prepareSessionRead(sessionSql)

  const paramsOf = (claims: AccessClaims): SessionParams => ({
    sessionFamily: claims.fam,
    sessionJti: claims.jti,
    sessionUser: claims.sub,
    sessionVersion: claims.ver,
    sessionNow: clock.now().toISOString(),
  })

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

  return {
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
  }
}
