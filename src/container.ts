import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { Db } from './db/client.ts'
import { guardTransactions } from './db/transaction-guard.ts'
import { HOUR, MINUTE, type Clock } from './lib/clock.ts'
import { commonErrors, type ErrorCode } from './lib/errors.ts'
import { appModules } from './modules/index.ts'
import { idempotencyErrors, sweepExpiredIdempotencyKeys } from './platform/idempotency/idempotency.ts'
import type { Mailer } from './platform/mail/mailer.ts'
import type { Infrastructure, RouteInstaller } from './platform/module.ts'
import type { EventType } from './platform/outbox/events.ts'
import { createOutbox } from './platform/outbox/outbox.ts'
import type { OutboxJobRow } from './platform/outbox/outbox.table.ts'
import { createWorker } from './platform/outbox/worker.ts'
import { outboxGauges } from './platform/outbox/outbox-metrics.ts'
import { createMetrics } from './platform/metrics/metrics.ts'
import { createStatisticsRegistry, foldStatCounters } from './platform/statistics/statistics.ts'
import { statisticsGauges } from './platform/statistics/statistics-metrics.ts'
import type { RealtimeHub } from './platform/realtime/realtime.ts'
import type { StorageDriver } from './platform/storage/storage.ts'

type AppModules = typeof appModules
type AnyModule = AppModules[number]

/** The API of every module, by module name. */
export type ModuleApis = { [M in AnyModule as M['name']]: ReturnType<M['create']> }

/**
 * Builds every module from the list in `src/modules/index.ts`, in its order, each given the
 * infrastructure and the APIs of the modules it needs; then the worker with every module's jobs
 * and periodic tasks. The dependency graph is that list.
 */
export function createContainer(base: { config: Config; db: Db; clock: Clock; mailer: Mailer; storage: StorageDriver; logger: FastifyBaseLogger; realtime: RealtimeHub }) {
  const outbox = createOutbox({ clock: base.clock })
  // Outside production, a query on the outer database inside a transaction fails at once (STYLE "Transactions").
  const db = base.config.isProduction ? base.db : guardTransactions(base.db)
  // The catalogue is declared statically by each module, so every module may read it at creation.
  const events = appModules.flatMap((module): readonly EventType[] => module.events ?? [])
  const statistics = createStatisticsRegistry()
  const infra: Infrastructure = { ...base, db, outbox, events, statistics }

  const apis: Record<string, unknown> = {}
  for (const module of appModules) {
    const missing = module.needs.filter((name) => !(name in apis))
    if (missing.length > 0) throw new Error(`module ${module.name} needs ${missing.join(', ')}: list it after them in src/modules/index.ts`)
    apis[module.name] = (module.create as (infra: Infrastructure, deps: unknown) => unknown)(infra, apis)
  }
  const each = <T>(pick: (module: AnyModule, api: never) => T | undefined): T[] =>
    appModules.flatMap((module) => {
      const found = pick(module, apis[module.name] as never)
      return found === undefined ? [] : [found]
    })

  for (const section of each((module, api) => module.statistics?.(api))) statistics.add(section)

  // The webhooks module handles the `event` job: one delivery per subscribed endpoint (decision 0061).
  const handlers = each((module, api) => module.jobs?.(api)).flat()
  const metrics = createMetrics()
  metrics.addGauges(outboxGauges(db, base.clock))
  metrics.addGauges(statisticsGauges(statistics, db))
  const worker = createWorker({
    db,
    clock: base.clock,
    onAttempt: (topic, succeeded) => metrics.observeJob(topic, succeeded),
    logger: base.logger.child({ component: 'worker' }),
    handlers: Object.fromEntries(handlers.map((handler) => [handler.topic, (payload: unknown, row: OutboxJobRow) => handler.run(payload, row)])),
    periodic: [
      { name: 'sweep-idempotency-keys', everyMs: HOUR, run: () => sweepExpiredIdempotencyKeys(db, base.clock.now()) },
      { name: 'fold-stat-counters', everyMs: MINUTE, run: () => foldStatCounters(db) },
      ...each((module, api) => module.periodic?.(api, infra)).flat(),
    ],
  })

  return {
    ...(apis as ModuleApis),
    db,
    outbox,
    worker,
    metrics,
    realtime: base.realtime,
    /** Route installers of every module, under the API prefix (`api`) or at the root (`root`). */
    routes: (where: 'api' | 'root'): RouteInstaller[] => each((module, api) => (where === 'api' ? module.routes?.(api, infra) : module.rootRoutes?.(api, infra))),
    /** Every event the modules emit (the webhook catalogue). */
    events,
    /** Every error code the API answers with: the common ones, then each module's. */
    errors: [...Object.values(commonErrors), ...Object.values(idempotencyErrors), ...each((module) => (module.errors ? Object.values(module.errors) : undefined)).flat()] as ErrorCode[],
  }
}

export type Container = ReturnType<typeof createContainer>
