import { and, asc, count, eq, isNull, or, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { webhookEndpoints, type EndpointRow } from './webhooks.table.ts'

type EndpointPatch = Partial<Omit<typeof webhookEndpoints.$inferInsert, 'id' | 'source' | 'createdAt'>>

export function createEndpointsRepository(db: Executor) {
  return {
    async insert(row: typeof webhookEndpoints.$inferInsert): Promise<EndpointRow> {
      const [inserted] = await db.insert(webhookEndpoints).values(row).returning()
      return inserted!
    },

    async findById(id: string): Promise<EndpointRow | undefined> {
      const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id))
      return row
    },

    async lockById(id: string): Promise<EndpointRow | undefined> {
      const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).for('update')
      return row
    },

    /** Oldest first, so the static endpoint (created first) leads. */
    async list(offset: number, limit: number): Promise<{ rows: EndpointRow[]; total: number }> {
      const [rows, [counted]] = await Promise.all([
        db.select().from(webhookEndpoints).orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(webhookEndpoints),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    async update(id: string, patch: EndpointPatch): Promise<EndpointRow | undefined> {
      const [row] = await db.update(webhookEndpoints).set(patch).where(eq(webhookEndpoints.id, id)).returning()
      return row
    },

    async delete(id: string): Promise<boolean> {
      const deleted = await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).returning({ id: webhookEndpoints.id })
      return deleted.length > 0
    },

    /**
     * The static endpoint follows the configuration: created on first use, its URL and secret
     * replaced when they change. Whether it is enabled stays as its owner (or a 410) left it.
     */
    async upsertStatic(row: Pick<EndpointRow, 'id' | 'url' | 'secret'> & { at: Date }): Promise<void> {
      await db
        .insert(webhookEndpoints)
        .values({ id: row.id, source: 'config', url: row.url, secret: row.secret, enabled: true, createdAt: row.at, updatedAt: row.at })
        .onConflictDoUpdate({
          target: webhookEndpoints.id,
          set: { url: row.url, secret: row.secret, previousSecret: null, previousSecretExpiresAt: null, updatedAt: row.at },
          setWhere: sql`${webhookEndpoints.url} is distinct from ${row.url} or ${webhookEndpoints.secret} is distinct from ${row.secret}`,
        })
    },

    /** Enabled endpoints that receive this event (all events, or a list naming it). */
    async subscribedTo(event: string): Promise<EndpointRow[]> {
      return db
        .select()
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.enabled, true), or(isNull(webhookEndpoints.events), sql`${event} = any(${webhookEndpoints.events})`)))
    },

    /** Records a failed attempt; returns since when the endpoint has been failing. */
    async markFailing(id: string, at: Date): Promise<EndpointRow | undefined> {
      const [row] = await db
        .update(webhookEndpoints)
        .set({ failingSince: sql`coalesce(${webhookEndpoints.failingSince}, ${at})` })
        .where(eq(webhookEndpoints.id, id))
        .returning()
      return row
    },

    async markHealthy(id: string): Promise<void> {
      await db
        .update(webhookEndpoints)
        .set({ failingSince: null })
        .where(and(eq(webhookEndpoints.id, id), sql`${webhookEndpoints.failingSince} is not null`))
    },

    /** Disables an enabled endpoint; undefined when it already was (so one caller reports it). */
    async disable(id: string, reason: string, at: Date): Promise<EndpointRow | undefined> {
      const [row] = await db
        .update(webhookEndpoints)
        .set({ enabled: false, disabledReason: reason, disabledAt: at, updatedAt: at })
        .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.enabled, true)))
        .returning()
      return row
    },
  }
}
