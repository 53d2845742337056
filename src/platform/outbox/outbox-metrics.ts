import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { GaugeGroup } from '../metrics/metrics.ts'
import { createOutboxRepository } from './outbox.repository.ts'

/**
 * The queue's health per topic: jobs waiting, how late the oldest due one is (the lag a stuck or
 * slow worker shows first), and jobs that gave up.
 */
export function outboxGauges(db: Db, clock: Clock): GaugeGroup {
  return {
    gauges: [
      { name: 'outbox_jobs_waiting', help: 'Background jobs pending or running, by topic.', labelNames: ['topic'] },
      { name: 'outbox_oldest_due_seconds', help: 'How long the oldest due job of each topic has waited past its run time (outbox lag).', labelNames: ['topic'] },
      { name: 'outbox_jobs_dead', help: 'Background jobs that used up their attempts, by topic (each needs a look).', labelNames: ['topic'] },
    ],
    async collect() {
      const rows = await createOutboxRepository(db).queueState(clock.now())
      const per = (value: (row: (typeof rows)[number]) => number) => rows.map((row) => ({ labels: { topic: row.topic }, value: value(row) }))
      return {
        outbox_jobs_waiting: per((row) => row.waiting),
        outbox_oldest_due_seconds: per((row) => row.oldestDueSeconds),
        outbox_jobs_dead: per((row) => row.dead),
      }
    },
  }
}
