import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import { API_PREFIX } from './http/prefix.ts'
import type { Db } from './db/client.ts'
import { HOUR, MINUTE, type Clock } from './lib/clock.ts'
import type { Mailer } from './platform/mail/mailer.ts'
import { createOutbox } from './platform/outbox/outbox.ts'
import { createWorker, type JobHandler, type PeriodicTask } from './platform/outbox/worker.ts'
import { createAdminService } from './modules/admin/admin.service.ts'
import { createAuthService, MAIL_TOPICS } from './modules/auth/auth.service.ts'
import { createTokenService } from './modules/auth/tokens.ts'
import { createRolesService } from './modules/roles/roles.service.ts'
import { createUsersService } from './modules/users/users.service.ts'
import { createPortfolioService } from './modules/portfolio/portfolio.service.ts'
import { createServicesService } from './modules/catalogue/services.service.ts'
import { EVENT_TOPIC } from './platform/outbox/events.ts'
import { createCategoriesService } from './modules/catalogue/categories.service.ts'
import { createUrlSigner } from './modules/uploads/signed-urls.ts'
import { createUploadsService, STORAGE_TOPICS } from './modules/uploads/uploads.service.ts'
import type { StorageDriver } from './platform/storage/storage.ts'

export interface Infrastructure {
  config: Config
  db: Db
  clock: Clock
  mailer: Mailer
  storage: StorageDriver
  logger: FastifyBaseLogger
}

/** The dependency graph of every module service, on one screen. */
export function createServices({ config, db, clock, mailer, storage, logger }: Infrastructure) {
  const outbox = createOutbox({ clock })
  const tokens = createTokenService(config.jwt, clock)
  const uploads = createUploadsService({
    db,
    clock,
    storage,
    outbox,
    signer: createUrlSigner(config.jwt.accessSecret),
    filesBaseUrl: `${config.publicUrl}${API_PREFIX}/uploads`,
    tmpDir: config.tmpDir,
    signedUrlTtlSeconds: config.signedUrlTtlSeconds,
  })
  const portfolio = createPortfolioService({ db, clock })
  // Services show their sellers and users count their services: the late-bound call breaks the cycle.
  const catalogueServices = createServicesService({ db, clock, outbox, uploads, users: { publicSummariesOf: (ids) => users.publicSummariesOf(ids) } })
  const users = createUsersService({ db, clock, uploads, portfolio, catalogue: catalogueServices })
  const roles = createRolesService({ db, clock })
  const categories = createCategoriesService({ db, clock })
  const auth = createAuthService({ db, clock, tokens, users, roles, outbox, mailer, appUrl: config.appUrl })
  const admin = createAdminService({ db, clock, users, roles })

  const handlers: Record<string, JobHandler> = {
    [MAIL_TOPICS.activation]: (payload) => auth.sendActivationEmail(payload),
    [MAIL_TOPICS.passwordReset]: (payload) => auth.sendPasswordResetEmail(payload),
    [STORAGE_TOPICS.move]: (payload) => uploads.moveStoredFile(payload as { uploadId: string; from: string; to: string }),
    [STORAGE_TOPICS.delete]: (payload) => uploads.deleteStoredFile(payload as { key: string }),
    [STORAGE_TOPICS.deleteIfOrphan]: (payload) => uploads.deleteIfOrphan(payload as { key: string }),
    // Events are only recorded for now: webhook delivery (DESIGN 6) arrives with the webhooks module.
    [EVENT_TOPIC]: async (payload) => logger.info({ event: payload.event, data: payload.data }, 'event recorded'),
  }
  const periodic: PeriodicTask[] = [
    { name: 'purge-revoked-tokens', everyMs: HOUR, run: auth.purgeRevokedTokens },
    { name: 'purge-token-families', everyMs: HOUR, run: auth.purgeTokenFamilies },
    { name: 'purge-unattached-uploads', everyMs: 15 * MINUTE, run: () => uploads.purgeUnattached() },
  ]
  const worker = createWorker({ db, clock, logger: logger.child({ component: 'worker' }), handlers, periodic })

  return { outbox, tokens, uploads, users, roles, portfolio, categories, catalogueServices, auth, admin, worker }
}

export type Services = ReturnType<typeof createServices>
