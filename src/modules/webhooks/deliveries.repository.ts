import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { webhookAttempts, webhookDeliveries, webhookEndpoints, type AttemptRow, type DeliveryRow, type DeliveryStatus } from './webhooks.table.ts'

interface ClaimOptions {
  now: Date
  leaseUntil: Date
  limit: number
  perEndpoint: number
  busy: string[]
}

type DeliveryPatch = Partial<Pick<DeliveryRow, 'status' | 'scheduleStep' | 'nextAttemptAt' | 'lockedUntil' | 'lastStatusCode' | 'lastError' | 'completedAt'>>

/**
 * Claims due deliveries of enabled endpoints, and deliveries whose lease ran out (a worker
 * died mid-delivery), at most `perEndpoint` per endpoint and none of the endpoints in `busy`
 * (this worker is still delivering to them). SKIP LOCKED lets workers claim side by side.
 */
async function claimDueDeliveries(db: Executor, options: ClaimOptions): Promise<DeliveryRow[]> {
  const { now, leaseUntil, limit, perEndpoint, busy } = options
  const notBusy = busy.length > 0 ? sql`and d.endpoint_id not in (${sql.join(
    busy.map((id) => sql`${id}::uuid`),
    sql`, `,
  )})` : sql``
  const candidates = sql`
        select id from (
          select d.id, row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as position
          from ${webhookDeliveries} d join ${webhookEndpoints} e on e.id = d.endpoint_id and e.enabled
          where ((d.status = 'pending' and d.next_attempt_at <= ${now}) or (d.status = 'delivering' and d.locked_until < ${now})) ${notBusy}
        ) ranked where position <= ${perEndpoint}`
  // The status test is repeated on the locked rows themselves: when a row another worker has
  // just claimed and committed is locked here, PostgreSQL rechecks only this level's conditions
  // against the new row version, not the subquery's, and the row would be claimed twice.
  const stillDue = sql`((${webhookDeliveries.status} = 'pending' and ${webhookDeliveries.nextAttemptAt} <= ${now}) or (${webhookDeliveries.status} = 'delivering' and ${webhookDeliveries.lockedUntil} < ${now}))`
  const due = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(sql`${webhookDeliveries.id} in (${candidates})`, stillDue))
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(limit)
    .for('update', { skipLocked: true })
  return db
    .update(webhookDeliveries)
    .set({ status: 'delivering', attempts: sql`${webhookDeliveries.attempts} + 1`, lockedUntil: leaseUntil })
    .where(sql`${webhookDeliveries.id} in ${due}`)
    .returning()
}

export function createDeliveriesRepository(db: Executor) {
  return {
    /** Deliveries not finished, those among them retrying after a failure, and those that gave up; through the status index. */
    async stateCounts(): Promise<{ waiting: number; retrying: number; failed: number }> {
      const [row] = await db
        .select({
          waiting: sql<number>`count(*) filter (where ${webhookDeliveries.status} in ('pending', 'delivering'))`.mapWith(Number),
          retrying: sql<number>`count(*) filter (where ${webhookDeliveries.status} = 'pending' and ${webhookDeliveries.scheduleStep} > 0)`.mapWith(Number),
          failed: sql<number>`count(*) filter (where ${webhookDeliveries.status} = 'failed')`.mapWith(Number),
        })
        .from(webhookDeliveries)
        .where(inArray(webhookDeliveries.status, ['pending', 'delivering', 'failed']))
      return row ?? { waiting: 0, retrying: 0, failed: 0 }
    },

    async countEndpoints(): Promise<{ enabled: number; disabled: number }> {
      const [row] = await db
        .select({
          enabled: sql<number>`count(*) filter (where ${webhookEndpoints.enabled})`.mapWith(Number),
          disabled: sql<number>`count(*) filter (where not ${webhookEndpoints.enabled})`.mapWith(Number),
        })
        .from(webhookEndpoints)
      return row ?? { enabled: 0, disabled: 0 }
    },

    async insertMany(rows: (typeof webhookDeliveries.$inferInsert)[]): Promise<void> {
      if (rows.length === 0) return
      await db.insert(webhookDeliveries).values(rows).onConflictDoNothing({ target: [webhookDeliveries.endpointId, webhookDeliveries.messageId] })
    },

    async insert(row: typeof webhookDeliveries.$inferInsert): Promise<DeliveryRow> {
      const [inserted] = await db.insert(webhookDeliveries).values(row).returning()
      return inserted!
    },

    async findById(id: string): Promise<DeliveryRow | undefined> {
      const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id))
      return row
    },

    async lockById(id: string): Promise<DeliveryRow | undefined> {
      const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).for('update')
      return row
    },

    claimDue: (options: ClaimOptions) => claimDueDeliveries(db, options),

    /** Ends an attempt; the attempt guard keeps a worker whose lease ran out from overwriting a newer claim. */
    async finish(id: string, attempt: number, patch: DeliveryPatch): Promise<boolean> {
      const updated = await db
        .update(webhookDeliveries)
        .set(patch)
        .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.attempts, attempt), eq(webhookDeliveries.status, 'delivering')))
        .returning({ id: webhookDeliveries.id })
      return updated.length > 0
    },

    async update(id: string, patch: DeliveryPatch): Promise<DeliveryRow> {
      const [row] = await db.update(webhookDeliveries).set(patch).where(eq(webhookDeliveries.id, id)).returning()
      return row!
    },

    async recordAttempt(row: typeof webhookAttempts.$inferInsert): Promise<void> {
      await db.insert(webhookAttempts).values(row)
    },

    /** An endpoint's deliveries, newest first. */
    async listByEndpoint(endpointId: string, status: DeliveryStatus | undefined, offset: number, limit: number): Promise<{ rows: DeliveryRow[]; total: number }> {
      const where = and(eq(webhookDeliveries.endpointId, endpointId), status ? eq(webhookDeliveries.status, status) : undefined)
      const [rows, [counted]] = await Promise.all([
        db.select().from(webhookDeliveries).where(where).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(webhookDeliveries).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    async attemptsOf(deliveryIds: string[]): Promise<AttemptRow[]> {
      if (deliveryIds.length === 0) return []
      return db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, deliveryIds)).orderBy(asc(webhookAttempts.attempt))
    },
  }
}