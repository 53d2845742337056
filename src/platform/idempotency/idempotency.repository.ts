import { and, eq, lte, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { idempotencyKeys, type IdempotencyKeyRow, type NewIdempotencyKey } from './idempotency.table.ts'

/** Which claim a write belongs to: the row is only touched while it is still that claim. */
export interface ClaimRef {
  userId: string
  key: string
  expiresAt: Date
}

export interface StoredAnswer {
  status: number
  body: string
  contentType: string | null
}

const sameClaim = (claim: ClaimRef) =>
  and(eq(idempotencyKeys.userId, claim.userId), eq(idempotencyKeys.key, claim.key), eq(idempotencyKeys.state, 'in_progress'), eq(idempotencyKeys.expiresAt, claim.expiresAt))

export function createIdempotencyRepository(db: Executor) {
  return {
    /**
     * Inserts the key as `in_progress`, or takes over a row that expired by `now`. Returns the
     * claimed row, or undefined when a live row holds the key. On that conflict PostgreSQL locks
     * the existing row even though the update's condition is false, so a `find` in the same
     * transaction sees it as it is (it cannot be released in between).
     */
    async claim(row: NewIdempotencyKey & { state: 'in_progress' }, now: Date): Promise<IdempotencyKeyRow | undefined> {
      const [claimed] = await db
        .insert(idempotencyKeys)
        .values(row)
        .onConflictDoUpdate({
          target: [idempotencyKeys.userId, idempotencyKeys.key],
          set: {
            fingerprint: row.fingerprint,
            state: 'in_progress',
            responseStatus: null,
            responseBody: null,
            responseContentType: null,
            createdAt: row.createdAt,
            expiresAt: row.expiresAt,
          },
          setWhere: lte(idempotencyKeys.expiresAt, now),
        })
        .returning()
      return claimed
    },

    async find(userId: string, key: string): Promise<IdempotencyKeyRow | undefined> {
      const [row] = await db
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key)))
      return row
    },

    async complete(claim: ClaimRef, answer: StoredAnswer): Promise<boolean> {
      const updated = await db
        .update(idempotencyKeys)
        .set({ state: 'completed', responseStatus: answer.status, responseBody: answer.body, responseContentType: answer.contentType })
        .where(sameClaim(claim))
        .returning({ key: idempotencyKeys.key })
      return updated.length > 0
    },

    async release(claim: ClaimRef): Promise<boolean> {
      const deleted = await db.delete(idempotencyKeys).where(sameClaim(claim)).returning({ key: idempotencyKeys.key })
      return deleted.length > 0
    },

    /** Deletes up to `limit` rows expired by `now`; SKIP LOCKED lets several workers sweep side by side. */
    async deleteExpired(now: Date, limit: number): Promise<number> {
      const batch = db
        .select({ userId: idempotencyKeys.userId, key: idempotencyKeys.key })
        .from(idempotencyKeys)
        .where(lte(idempotencyKeys.expiresAt, now))
        .limit(limit)
        .for('update', { skipLocked: true })
      const deleted = await db
        .delete(idempotencyKeys)
        .where(sql`(${idempotencyKeys.userId}, ${idempotencyKeys.key}) in ${batch}`)
        .returning({ key: idempotencyKeys.key })
      return deleted.length
    },
  }
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>
