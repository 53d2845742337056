import { and, eq, inArray, isNull, lt, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { placeholdersOf } from '../../db/fragments.ts'
import { jsonObjectSql } from '../../db/json-sql.ts'
import { preparedSql } from '../../db/statements.ts'
import type { IdentityJson } from '../users/users.module.ts'
import { SessionState } from './auth.schemas.ts'
import { refreshTokens, revokedTokens, tokenFamilies, type NewRefreshTokenRow, type NewTokenFamilyRow } from './auth.table.ts'

/** The placeholders of a statement that reads a session (`sessionJsonSql`), filled from the token by `sessionParams`. */
export interface SessionParams {
  sessionFamily: string | null
  sessionJti: string | null
  sessionUser: string | null
  sessionVersion: number | null
  /** The time the session must be live at, ISO 8601. */
  sessionNow: string | null
}

/** What `sessionJsonSql` reads: whether the session is live, and who its user is. */
export type SessionJson = SessionState

/** The fragments of the users module a session check is made of. */
export interface SessionParts {
  identityJsonSql(userId: AnyColumn): SQL<IdentityJson | null>
  usableAccountSql(userId: AnyColumn, version: SQL): SQL<boolean>
}

/**
 * What an access token needs checked, as a scalar subquery any statement can select beside its
 * own data: the session is live when the token's family is the token user's, not revoked and not
 * expired, the token itself is not revoked, and the account is usable at the token's version.
 * Null for an unknown family, or when the placeholders are null (a caller checked already).
 */
export const sessionJsonSql = (parts: SessionParts) => {
  const p = placeholdersOf<SessionParams>()
  return sql<SessionJson | null>`(select ${jsonObjectSql(SessionState, {
    live: sql`${tokenFamilies.revokedAt} is null and ${tokenFamilies.expiresAt} > ${p('sessionNow')}::timestamptz and ${tokenFamilies.userId} = ${p('sessionUser')}::uuid
        and not exists (select 1 from ${revokedTokens} where ${revokedTokens.jti} = ${p('sessionJti')}::text)
        and ${parts.usableAccountSql(tokenFamilies.userId, sql`${p('sessionVersion')}::int`)}`,
    account: parts.identityJsonSql(tokenFamilies.userId),
  })}
    from ${tokenFamilies} where ${tokenFamilies.id} = ${p('sessionFamily')}::uuid)`
}

/** The session of every authenticated request that does not read it in its own statement: one statement, planned once per connection. */
export function prepareSessionRead(sessionSql: SQL<SessionJson | null>) {
  const statement = preparedSql<SessionParams, { session: SessionJson | null }>('auth_session', sql`select ${sessionSql} as session`)
  return async (executor: Executor, params: SessionParams) => (await statement(executor, params))[0]?.session ?? null
}

export function createAuthRepository(db: Executor) {
  return {
    async revoke(jti: string, expiresAt: Date): Promise<void> {
      await db.insert(revokedTokens).values({ jti, expiresAt }).onConflictDoNothing()
    },

    async purgeExpired(now: Date): Promise<number> {
      const rows = await db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, now)).returning({ jti: revokedTokens.jti })
      return rows.length
    },

    async insertFamily(row: NewTokenFamilyRow): Promise<void> {
      await db.insert(tokenFamilies).values(row)
    },

    async insertRefreshToken(row: NewRefreshTokenRow): Promise<void> {
      await db.insert(refreshTokens).values(row)
    },

    /** The refresh token and its family, both rows locked until the transaction ends. */
    async lockRefreshToken(jti: string) {
      const [row] = await db
        .select({
          jti: refreshTokens.jti,
          usedAt: refreshTokens.usedAt,
          familyId: tokenFamilies.id,
          userId: tokenFamilies.userId,
          expiresAt: tokenFamilies.expiresAt,
          revokedAt: tokenFamilies.revokedAt,
        })
        .from(refreshTokens)
        .innerJoin(tokenFamilies, eq(tokenFamilies.id, refreshTokens.familyId))
        .where(eq(refreshTokens.jti, jti))
        .for('update')
      return row
    },

    async markRefreshTokenUsed(jti: string, at: Date): Promise<void> {
      await db.update(refreshTokens).set({ usedAt: at }).where(eq(refreshTokens.jti, jti))
    },

    /** Revokes the named families of this user that are not revoked yet (the first revocation time is kept). */
    async revokeFamilies(userId: string, familyIds: string[], at: Date): Promise<void> {
      if (familyIds.length === 0) return
      await db
        .update(tokenFamilies)
        .set({ revokedAt: at })
        .where(and(eq(tokenFamilies.userId, userId), inArray(tokenFamilies.id, familyIds), isNull(tokenFamilies.revokedAt)))
    },

    /** Deletes families past their expiry, with their refresh tokens (cascade). */
    async purgeExpiredFamilies(now: Date): Promise<number> {
      const rows = await db.delete(tokenFamilies).where(lt(tokenFamilies.expiresAt, now)).returning({ id: tokenFamilies.id })
      return rows.length
    },
  }
}
