import type { Static, TObject } from '@sinclair/typebox'
import { like, sql } from 'drizzle-orm'
import { rowsOf, type Db, type Executor } from '../../db/client.ts'
import { statCounterDeltas, statCounters } from './statistics.table.ts'

/**
 * One module's section of `GET /admin/stats`: its name (the key in the answer), the schema of its
 * figures and how to collect them. A module contributes one with the `statistics` field of its
 * module file; the admin module answers every section it finds, so adding figures touches only
 * the module that owns them.
 */
export interface StatsSection<S extends TObject = TObject> {
  readonly name: string
  readonly schema: S
  collect(executor: Executor): Promise<Static<S>>
}

export const defineStats = <S extends TObject>(name: string, schema: S, collect: (executor: Executor) => Promise<Static<S>>): StatsSection<S> => ({ name, schema, collect })

/** The sections of every module, filled by the container once all modules are built. */
export function createStatisticsRegistry() {
  const sections: StatsSection[] = []
  return {
    add(section: StatsSection): void {
      if (sections.some((existing) => existing.name === section.name)) throw new Error(`two modules contribute the statistics section ${section.name}`)
      sections.push(section)
    },
    sections: (): readonly StatsSection[] => sections,
  }
}

export type StatisticsRegistry = ReturnType<typeof createStatisticsRegistry>

/** The trigger-kept counters whose name starts with `<prefix>.`, by the rest of their name (missing counters are 0). */
export async function readCounters(executor: Executor, prefix: string): Promise<Map<string, number>> {
  const pattern = `${prefix}.%`
  const [folded, pending] = await Promise.all([
    executor.select().from(statCounters).where(like(statCounters.name, pattern)),
    executor
      .select({ name: statCounterDeltas.name, value: sql<number>`sum(${statCounterDeltas.delta})::bigint` })
      .from(statCounterDeltas)
      .where(like(statCounterDeltas.name, pattern))
      .groupBy(statCounterDeltas.name),
  ])
  const values = new Map<string, number>()
  for (const row of [...folded, ...pending]) {
    const name = row.name.slice(prefix.length + 1)
    values.set(name, (values.get(name) ?? 0) + Number(row.value))
  }
  return values
}

/**
 * Folds appended deltas into their counters, oldest first, in one statement: the deltas it
 * deletes are exactly the ones it adds (two workers folding at once never count a delta twice).
 * Answers how many deltas it folded.
 */
export async function foldStatCounters(db: Db, limit = 10_000): Promise<number> {
  // A data-modifying CTE runs whether or not the final select reads it.
  const rows = await rowsOf<{ folded: number }>(
    db,
    sql`
    with moved as (
      delete from ${statCounterDeltas}
      where ${statCounterDeltas.id} in (select ${statCounterDeltas.id} from ${statCounterDeltas} order by ${statCounterDeltas.id} limit ${limit})
      returning ${statCounterDeltas.name} as name, ${statCounterDeltas.delta} as delta
    ), folded as (
      insert into ${statCounters} (name, value)
      select name, sum(delta)::bigint from moved group by name
      on conflict (name) do update set value = ${statCounters.value} + excluded.value
    )
    select count(*)::int as folded from moved`,
  )
  return rows[0]?.folded ?? 0
}