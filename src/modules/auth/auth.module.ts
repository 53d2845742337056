import { HOUR } from '../../lib/clock.ts'
import { defineModule } from '../../platform/module.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import type { RolesService } from '../roles/roles.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { authErrors } from './auth.errors.ts'
import { authPages } from './auth.pages.ts'
import { authRoutes } from './auth.routes.ts'
import { MAIL_JOBS } from './auth-mail-jobs.ts'
import { createAuthService, type AuthService } from './auth.service.ts'
import { refreshTokens, revokedTokens, tokenFamilies } from './auth.table.ts'
import { createTokenService } from './tokens.ts'

/** Registration, activation, login sessions (token families), password reset and authentication of every request. */
export const authModule = defineModule({
  name: 'auth',
  needs: ['users', 'roles'],
  tables: { revokedTokens, tokenFamilies, refreshTokens },
  create: ({ config, db, clock, outbox, mailer, realtime }, deps: { users: UsersService; roles: RolesService }) => {
    const tokens = createTokenService(config.jwt, clock)
    return { ...createAuthService({ db, clock, tokens, outbox, mailer, appUrl: config.appUrl, realtime, ...deps }), tokens }
  },
  routes: (api) => async (app) => {
    await app.register(authRoutes, { auth: api })
  },
  // The links in activation and reset e-mails open these pages when no front end is configured.
  rootRoutes: (api) => async (app) => {
    await app.register(authPages, { auth: api })
  },
  jobs: (api) => [handleJob(MAIL_JOBS.activation, (payload) => api.sendActivationEmail(payload)), handleJob(MAIL_JOBS.passwordReset, (payload) => api.sendPasswordResetEmail(payload))],
  periodic: (api) => [
    { name: 'purge-revoked-tokens', everyMs: HOUR, run: api.purgeRevokedTokens },
    { name: 'purge-token-families', everyMs: HOUR, run: api.purgeTokenFamilies },
  ],
  errors: authErrors,
})

export type { AuthService }
/** What a route's statement needs to read and confirm its caller's session itself (decision 0087). */
export type SessionCheck = AuthService['sessionCheck']
export type { SessionJson, SessionParams } from './auth.repository.ts'
