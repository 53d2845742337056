import { asc, eq } from 'drizzle-orm'
import { outboxJobs } from '../../src/platform/outbox/outbox.table.ts'
import type { TestContext } from '../setup/test-app.ts'

/** The data of every event of this name written to the outbox, oldest first. */
export async function eventsNamed(ctx: TestContext, name: string): Promise<Record<string, unknown>[]> {
  const rows = await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'event')).orderBy(asc(outboxJobs.createdAt), asc(outboxJobs.id))
  return rows.map((row) => row.payload as { event: string; data: Record<string, unknown> }).filter((payload) => payload.event === name).map((payload) => payload.data)
}
