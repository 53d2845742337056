import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { StatisticsRegistry } from '../../platform/statistics/statistics.ts'
import { dailySeries, type SeriesMetric } from './admin.series.ts'

/** The figures of the marketplace for staff: every module's statistics section, and series per day. */
export function createAdminStatistics(deps: { db: Db; clock: Clock; statistics: StatisticsRegistry }) {
  const { db, clock, statistics } = deps
  return {
    /** `GET /admin/stats`: every module's section, collected in parallel. */
    async collectStatistics(): Promise<Record<string, Record<string, unknown>>> {
      const sections = statistics.sections()
      const figures = await Promise.all(sections.map((section) => section.collect(db)))
      return Object.fromEntries(sections.map((section, index) => [section.name, figures[index]!]))
    },

    /** `GET /admin/stats/series`: one metric per day over the last `days` days. */
    async statisticsSeries(metric: SeriesMetric, days: number) {
      const points = await dailySeries(db, metric, days, clock.now())
      return { metric, unit: metric === 'revenue' ? ('cents' as const) : ('count' as const), total: points.reduce((sum, point) => sum + point.value, 0), points }
    },

    /** The sections `GET /admin/stats` answers with (its response schema is built from them). */
    statisticsSections: () => statistics.sections(),
  }
}
