import { bigint, index, pgTable, text } from 'drizzle-orm/pg-core'

/**
 * Counters kept by database triggers (custom migration `stat_counters_custom`), so a figure of the
 * admin statistics is a primary-key read instead of a count over a whole table. A trigger runs in
 * the transaction of the change it counts, so a counter cannot drift from the rows. Triggers only
 * append to `stat_counter_deltas` (no row is contended by concurrent writers); the worker folds
 * the deltas into `stat_counters` every minute, and a read adds the deltas not folded yet.
 */
export const statCounters = pgTable('stat_counters', {
  /** `<section>.<figure>`, e.g. `users.total`, `services.active`, `wallet.escrow_held`. */
  name: text('name').primaryKey(),
  value: bigint('value', { mode: 'number' }).notNull().default(0),
})

export const statCounterDeltas = pgTable(
  'stat_counter_deltas',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    name: text('name').notNull(),
    delta: bigint('delta', { mode: 'number' }).notNull(),
  },
  (table) => [index('stat_counter_deltas_name_idx').on(table.name)],
)
