import type { GaugeGroup } from '../platform/metrics/metrics.ts'
import type { Database } from './client.ts'

/** The PostgreSQL pool's connections by state; a growing `waiting` means requests queue for a connection. */
export function poolGauges(database: Database): GaugeGroup {
  const pool = database.kind === 'postgres' ? database.pool : undefined
  return {
    gauges: [{ name: 'db_pool_connections', help: 'Connections of the PostgreSQL pool by state (`total`, `idle`, and `waiting` clients queued for one).', labelNames: ['state'] }],
    collect: () => ({
      db_pool_connections: pool
        ? [
            { labels: { state: 'total' }, value: pool.totalCount },
            { labels: { state: 'idle' }, value: pool.idleCount },
            { labels: { state: 'waiting' }, value: pool.waitingCount },
          ]
        : [],
    }),
  }
}
