import { sql, type SQL } from 'drizzle-orm'
import { rowsOf, type Executor } from '../../db/client.ts'
import { DAY } from '../../lib/clock.ts'

export const seriesMetrics = ['orders', 'signups', 'revenue'] as const
export type SeriesMetric = (typeof seriesMetrics)[number]

export interface SeriesPoint {
  date: string
  value: number
}

/**
 * What each metric adds up per day (UTC), from `from` on. The admin module owns no tables: these
 * are read-only aggregates over the tables of the users, orders and wallet modules, by their SQL
 * names, the way a reporting query reads them (docs/decisions/0151-statistics-per-day.md).
 */
const dailyQuery: Record<SeriesMetric, (from: Date) => SQL> = {
  // Every account created: clients and staff alike.
  signups: (from) => sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::bigint as value
    from users where created_at >= ${from} group by 1`,
  // Orders placed, whatever became of them.
  orders: (from) => sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::bigint as value
    from orders where created_at >= ${from} group by 1`,
  // The platform's revenue account: fees earned, less fees given back by refunds.
  revenue: (from) => sql`select to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, sum(e.amount_cents)::bigint as value
    from ledger_entries e join ledger_accounts a on a.id = e.account_id
    where a.kind = 'revenue' and a.owner_id is null and e.created_at >= ${from} group by 1`,
}

/** The last `days` days up to `now` (UTC), oldest first, each with its value (0 for a day without any). */
export async function dailySeries(executor: Executor, metric: SeriesMetric, days: number, now: Date): Promise<SeriesPoint[]> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const from = new Date(today - (days - 1) * DAY)
  const rows = await rowsOf<{ day: string; value: string | number }>(executor, dailyQuery[metric](from))
  const values = new Map(rows.map((row) => [row.day, Number(row.value)]))
  return Array.from({ length: days }, (_, index) => {
    const date = new Date(from.getTime() + index * DAY).toISOString().slice(0, 10)
    return { date, value: values.get(date) ?? 0 }
  })
}
