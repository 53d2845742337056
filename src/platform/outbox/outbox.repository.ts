import { and, eq, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { outboxAttempts, outboxJobs, type OutboxJobRow } from './outbox.table.ts'

export function createOutboxRepository(db: Executor) {
  return {
    async insert(row: typeof outboxJobs.$inferInsert): Promise<OutboxJobRow> {
      const [inserted] = await db.insert(outboxJobs).values(row).returning()
      return inserted!
    },

    /**
     * Claims due jobs, and jobs whose lease ran out (a worker died mid-job). SKIP LOCKED lets
     * several workers claim side by side without waiting on, or taking, each other's rows.
     */
    async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<OutboxJobRow[]> {
      const due = db
        .select({ id: outboxJobs.id })
        .from(outboxJobs)
        .where(
          sql`(${outboxJobs.status} = 'pending' and ${outboxJobs.runAt} <= ${now}) or (${outboxJobs.status} = 'running' and ${outboxJobs.lockedUntil} < ${now})`,
        )
        .orderBy(outboxJobs.runAt)
        .limit(limit)
        .for('update', { skipLocked: true })
      return db
        .update(outboxJobs)
        .set({ status: 'running', attempts: sql`${outboxJobs.attempts} + 1`, lockedUntil: leaseUntil })
        .where(sql`${outboxJobs.id} in ${due}`)
        .returning()
    },

    async finish(id: string, attempt: number, patch: Partial<typeof outboxJobs.$inferInsert>): Promise<void> {
      // The attempt guard keeps a worker whose lease expired from overwriting a newer claim.
      await db.update(outboxJobs).set(patch).where(and(eq(outboxJobs.id, id), eq(outboxJobs.attempts, attempt)))
    },

    /** Hands a claimed job back unstarted: due again at once, its attempt not counted. */
    async release(id: string, attempt: number): Promise<void> {
      await db
        .update(outboxJobs)
        .set({ status: 'pending', attempts: sql`${outboxJobs.attempts} - 1`, lockedUntil: null })
        .where(and(eq(outboxJobs.id, id), eq(outboxJobs.attempts, attempt), eq(outboxJobs.status, 'running')))
    },

    async recordAttempt(row: typeof outboxAttempts.$inferInsert): Promise<void> {
      await db.insert(outboxAttempts).values(row)
    },

    /**
     * Per topic: jobs waiting or running, the age of the oldest one due, and jobs that gave up.
     * Reads only the unfinished and dead rows, through the (status, run_at) index.
     */
    async queueState(now: Date): Promise<{ topic: string; waiting: number; dead: number; oldestDueSeconds: number }[]> {
      return db
        .select({
          topic: outboxJobs.topic,
          waiting: sql<number>`count(*) filter (where ${outboxJobs.status} in ('pending', 'running'))`.mapWith(Number),
          dead: sql<number>`count(*) filter (where ${outboxJobs.status} = 'dead')`.mapWith(Number),
          oldestDueSeconds: sql<number>`coalesce(extract(epoch from (${now}::timestamptz - min(${outboxJobs.runAt}) filter (where ${outboxJobs.status} in ('pending', 'running') and ${outboxJobs.runAt} <= ${now}))), 0)`.mapWith(Number),
        })
        .from(outboxJobs)
        .where(sql`${outboxJobs.status} in ('pending', 'running', 'dead')`)
        .groupBy(outboxJobs.topic)
    },
  }
}
