import { eq, lt } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { revokedTokens } from './auth.table.ts'

export function createAuthRepository(db: Executor) {
  return {
    async revoke(jti: string, expiresAt: Date): Promise<void> {
      await db.insert(revokedTokens).values({ jti, expiresAt }).onConflictDoNothing()
    },

    async isRevoked(jti: string): Promise<boolean> {
      const [row] = await db.select({ jti: revokedTokens.jti }).from(revokedTokens).where(eq(revokedTokens.jti, jti))
      return row !== undefined
    },

    async purgeExpired(now: Date): Promise<number> {
      const rows = await db.delete(revokedTokens).where(lt(revokedTokens.expiresAt, now)).returning({ jti: revokedTokens.jti })
      return rows.length
    },
  }
}
