import { sql } from 'drizzle-orm'
import type { Db } from '../../src/db/client.ts'

/**
 * Waits until some statement in this test database is blocked on a lock, so a race test knows the
 * request under test has reached the contended row or index (PostgreSQL only).
 */
export async function untilAQueryWaitsForALock(db: Db): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const [activity] = await db
      .select({ waiting: sql<number>`count(*)::int` })
      .from(sql`pg_stat_activity`)
      .where(sql`datname = current_database() and wait_event_type = 'Lock'`)
    if (Number(activity?.waiting) > 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('the request never reached the contended lock')
}
