import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { Db } from './db/client.ts'
import { HOUR, type Clock } from './lib/clock.ts'
import type { Mailer } from './platform/mail/mailer.ts'
import { createOutbox } from './platform/outbox/outbox.ts'
import { createWorker, type JobHandler, type PeriodicTask } from './platform/outbox/worker.ts'
import { createAdminService } from './modules/admin/admin.service.ts'
import { createAuthService, MAIL_TOPICS } from './modules/auth/auth.service.ts'
import { createTokenService } from './modules/auth/tokens.ts'
import { createRolesService } from './modules/roles/roles.service.ts'
import { createUsersService } from './modules/users/users.service.ts'

export interface Infrastructure {
  config: Config
  db: Db
  clock: Clock
  mailer: Mailer
  logger: FastifyBaseLogger
}

/** The dependency graph of every module service, on one screen. */
export function createServices({ config, db, clock, mailer, logger }: Infrastructure) {
  const outbox = createOutbox({ clock })
  const tokens = createTokenService(config.jwt, clock)
  const users = createUsersService({ db, clock })
  const roles = createRolesService({ db, clock })
  const auth = createAuthService({ db, clock, tokens, users, roles, outbox, mailer, appUrl: config.appUrl })
  const admin = createAdminService({ db, clock, users, roles })

  const userIdOf = (payload: Record<string, unknown>) => String(payload.userId)
  const handlers: Record<string, JobHandler> = {
    [MAIL_TOPICS.activation]: (payload) => auth.sendActivationEmail(userIdOf(payload)),
    [MAIL_TOPICS.passwordReset]: (payload) => auth.sendPasswordResetEmail(userIdOf(payload)),
  }
  const periodic: PeriodicTask[] = [{ name: 'purge-revoked-tokens', everyMs: HOUR, run: auth.purgeRevokedTokens }]
  const worker = createWorker({ db, clock, logger: logger.child({ component: 'worker' }), handlers, periodic })

  return { outbox, tokens, users, roles, auth, admin, worker }
}

export type Services = ReturnType<typeof createServices>
