import type { Db } from '../../db/client.ts'
import type { GaugeGroup, MetricSample } from '../metrics/metrics.ts'
import type { StatisticsRegistry } from './statistics.ts'

/** Every number of a section, by its dotted path: `{ byStatus: { pending: 3 } }` -> `byStatus.pending` 3. */
function numbersOf(value: unknown, path: string, into: MetricSample[], section: string): void {
  if (typeof value === 'number') into.push({ labels: { section, figure: path }, value })
  else if (value !== null && typeof value === 'object') for (const [key, child] of Object.entries(value)) numbersOf(child, path ? `${path}.${key}` : key, into, section)
}

/**
 * The business figures of `GET /admin/stats` (orders by status, gross volume, escrow held,
 * payouts pending, webhook deliveries failing, ...) as one Prometheus gauge, read from the same
 * sections at scrape time, so the console and the metrics never disagree.
 */
export function statisticsGauges(statistics: StatisticsRegistry, db: Db): GaugeGroup {
  return {
    gauges: [{ name: 'marketplace_statistic', help: 'The figures of GET /admin/stats, by section and figure (e.g. section="orders", figure="byStatus.pending").', labelNames: ['section', 'figure'] }],
    async collect() {
      const sections = statistics.sections()
      const figures = await Promise.all(sections.map((section) => section.collect(db)))
      const samples: MetricSample[] = []
      sections.forEach((section, index) => numbersOf(figures[index], '', samples, section.name))
      return { marketplace_statistic: samples }
    },
  }
}
