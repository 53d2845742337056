import { and, eq, inArray, isNull, lt, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { prepared } from '../../db/statements.ts'
import { refreshTokens, revokedTokens, tokenFamilies, type NewRefreshTokenRow, type NewTokenFamilyRow } from './auth.table.ts'

/**
 * What an access token needs checked, read on every authenticated request in one statement: its
 * family (live, not revoked, not expired), its own revocation, and the account of the family's
 * user (the users module's fragment). Built once, planned once per connection.
 */
export function prepareSessionRead(accountJsonSql: (userId: AnyColumn) => SQL<Record<string, unknown> | null>) {
  const statement = prepared('auth_session', (db) =>
    db
      .select({
        userId: tokenFamilies.userId,
        expiresAt: tokenFamilies.expiresAt,
        revokedAt: tokenFamilies.revokedAt,
        isTokenRevoked: sql<boolean>`exists (select 1 from ${revokedTokens} where ${revokedTokens.jti} = ${sql.placeholder('jti')})`,
        account: accountJsonSql(tokenFamilies.userId),
      })
      .from(tokenFamilies)
      .where(eq(tokenFamilies.id, sql.placeholder('familyId'))),
  )
  return async (executor: Executor, familyId: string, jti: string) => (await statement(executor, { familyId, jti }))[0]
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
