import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../config.ts'
import type { Db } from '../db/client.ts'
import type { Clock } from '../lib/clock.ts'
import type { ErrorCode } from '../lib/errors.ts'
import type { Mailer } from './mail/mailer.ts'
import type { EventType } from './outbox/events.ts'
import type { JobHandler } from './outbox/jobs.ts'
import type { Outbox } from './outbox/outbox.ts'
import type { PeriodicTask } from './outbox/worker.ts'
import type { StatisticsRegistry, StatsSection } from './statistics/statistics.ts'
import type { RealtimeHub } from './realtime/realtime.ts'
import type { StorageDriver } from './storage/storage.ts'

/** What every module may use: configuration, the database, time, mail, storage, logs, the outbox, the event catalogue, realtime sockets. */
export interface Infrastructure {
  config: Config
  db: Db
  clock: Clock
  mailer: Mailer
  storage: StorageDriver
  logger: FastifyBaseLogger
  outbox: Outbox
  /** Every event the modules declare (the typed catalogue), for the module that delivers them. */
  events: readonly EventType[]
  /** Every module's section of the admin statistics (filled once all modules are built). */
  statistics: StatisticsRegistry
  /** Frames to users' open sockets on every instance; `disconnectUser` on suspension, sessions on logout. */
  realtime: RealtimeHub
}

/** Registers a module's routes on the app (under the API prefix, or at the root for `rootRoutes`). */
export type RouteInstaller = (app: FastifyInstance) => Promise<void>

/**
 * The contract of a module: everything it contributes, declared in one `<name>.module.ts`. The
 * container builds modules in the order of `src/modules/index.ts`, passing each the APIs of the
 * modules it `needs` (which must come earlier in that list); the app registers their routes, the
 * worker their job handlers and periodic tasks, and the API reference their events and errors.
 */
export interface AppModule<Name extends string = string, Api = unknown, Deps = never> {
  name: Name
  /** Modules whose APIs `create` receives; each must be listed before this one. */
  needs: readonly string[]
  /** The module's tables (drizzle-kit reads every `*.table.ts`; this says whose they are). */
  tables: Record<string, unknown>
  create(infra: Infrastructure, deps: Deps): Api
  routes?(api: Api, infra: Infrastructure): RouteInstaller
  rootRoutes?(api: Api, infra: Infrastructure): RouteInstaller
  jobs?(api: Api): JobHandler[]
  /** Its periodic tasks; checks that act on business time run every `infra.config.workerTickMs`. */
  periodic?(api: Api, infra: Infrastructure): PeriodicTask[]
  events?: readonly EventType[]
  /** Its figures for `GET /admin/stats` (a section named after what it counts). */
  statistics?(api: Api): StatsSection
  errors?: Readonly<Record<string, ErrorCode>>
}

/** Declares a module; `needs` must name the keys of the `deps` that `create` takes. */
export const defineModule = <Name extends string, Api, Deps = Record<never, never>>(
  module: Omit<AppModule<Name, Api, Deps>, 'needs'> & { needs: readonly (keyof Deps & string)[] },
): AppModule<Name, Api, Deps> => module
