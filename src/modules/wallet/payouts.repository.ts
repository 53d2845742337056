import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { preparedSql } from '../../db/statements.ts'
import { transferCallSql, type TransferColumns, type TransferValues } from './ledger.repository.ts'
import { payouts, type PayoutRow, type PayoutStatus } from './payouts.table.ts'

/** What a payout request needs besides the transfer's own values (`transferValues`, which fill `payoutId`, `amountCents` and `createdAt`). */
export interface PayoutRequestValues {
  userId: string
  currency: string
  method: string
  /** JSON text. */
  details: string
}

/**
 * A payout request in one statement, so in one round trip and atomic without BEGIN and COMMIT:
 * the user's KYC flag (a users-module fragment), then, only for a verified user (a one-time
 * filter: the call never runs otherwise), the transfer from `available` to `payout_pending`, then
 * the payout row, only when the money moved.
 */
export function preparePayoutRequest(kycVerified: (userId: SQL) => SQL<boolean>) {
  const placeholder = (name: keyof PayoutRequestValues | 'payoutId' | 'amountCents' | 'createdAt') => sql.placeholder(name)
  return preparedSql<TransferValues & PayoutRequestValues, PayoutRequestRow>(
    'payouts_request',
    sql`with kyc as (select ${kycVerified(sql`${placeholder('userId')}::uuid`)} as verified),
    transfer as (select t.accounts_found, t.source_balance, t.moved from ${transferCallSql} t where (select verified from kyc)),
    inserted as (
      insert into ${payouts} (id, user_id, amount_cents, currency, method, details, status, created_at)
      select ${placeholder('payoutId')}::uuid, ${placeholder('userId')}::uuid, ${placeholder('amountCents')}::bigint, ${placeholder('currency')}::text,
        ${placeholder('method')}::text, ${placeholder('details')}::jsonb, 'pending', ${placeholder('createdAt')}::timestamptz
      from transfer where transfer.moved
    )
    select kyc.verified as kyc_verified, transfer.accounts_found, transfer.source_balance, transfer.moved
    from kyc left join transfer on true`,
  )
}

export type PayoutRequestRow = TransferColumns & { kyc_verified: boolean }

export function createPayoutsRepository(db: Executor) {
  return {
    /** Runs a statement of `preparePayoutRequest` with the transfer's values and the payout's. */
    async request(statement: ReturnType<typeof preparePayoutRequest>, values: TransferValues & PayoutRequestValues): Promise<PayoutRequestRow | undefined> {
      const [row] = await statement(db, values)
      return row
    },

    async lockById(id: string): Promise<PayoutRow | undefined> {
      const [row] = await db.select().from(payouts).where(eq(payouts.id, id)).for('update')
      return row
    },

    async update(id: string, patch: Partial<Pick<PayoutRow, 'status' | 'rejectionReason' | 'decidedBy' | 'decidedAt'>>): Promise<PayoutRow> {
      const [row] = await db.update(payouts).set(patch).where(eq(payouts.id, id)).returning()
      return row!
    },

    async listByUser(userId: string, offset: number, limit: number): Promise<{ rows: PayoutRow[]; total: number }> {
      const where = eq(payouts.userId, userId)
      const [rows, [counted]] = await Promise.all([
        db.select().from(payouts).where(where).orderBy(desc(payouts.createdAt), desc(payouts.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(payouts).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Staff queue: oldest first, so requests are worked in order. */
    async listByStatus(status: PayoutStatus | undefined, offset: number, limit: number): Promise<{ rows: PayoutRow[]; total: number }> {
      const where = status ? eq(payouts.status, status) : undefined
      const [rows, [counted]] = await Promise.all([
        db.select().from(payouts).where(where).orderBy(asc(payouts.createdAt), asc(payouts.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(payouts).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Pending payouts, through `payouts_pending_idx`: only the queue is read, never the decided history. */
    async pendingTotals(): Promise<{ count: number; amountCents: number }> {
      const [row] = await db
        .select({ count: count(), amountCents: sql<number>`coalesce(sum(${payouts.amountCents}), 0)::bigint` })
        .from(payouts)
        .where(eq(payouts.status, 'pending'))
      return { count: row?.count ?? 0, amountCents: Number(row?.amountCents ?? 0) }
    },

    async findOwned(id: string, userId: string): Promise<PayoutRow | undefined> {
      const [row] = await db
        .select()
        .from(payouts)
        .where(and(eq(payouts.id, id), eq(payouts.userId, userId)))
      return row
    },
  }
}
