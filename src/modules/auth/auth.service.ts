import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { normaliseEmail } from '../../lib/text.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RolesService } from '../roles/roles.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createAccountActivation } from './account-activation.service.ts'
import { createLoginSessions } from './login-sessions.service.ts'
import { createPasswordReset } from './password-reset.service.ts'
import { createSessionChecks } from './session-check.service.ts'
import type { TokenService } from './tokens.ts'

export interface AuthDeps {
  db: Db
  clock: Clock
  tokens: TokenService
  users: Pick<UsersService, 'createAccount' | 'describe' | 'findAccountByEmail' | 'findAccountById' | 'lockAccount' | 'recordLogin' | 'updateAccount' | 'identityJsonSql' | 'usableAccountSql'>
  roles: Pick<RolesService, 'permissionsOf'>
  outbox: Outbox
  mailer: Mailer
  appUrl: string
  realtime: Pick<RealtimeHub, 'disconnectSessions' | 'disconnectUser'>
}

/**
 * The auth module's API: registration and activation, login sessions, password reset, and the
 * check of every request's session, each in its own file.
 */
export function createAuthService(deps: AuthDeps) {
  const { db, users } = deps
  return {
    ...createAccountActivation(deps),
    ...createLoginSessions(deps),
    ...createPasswordReset(deps),
    ...createSessionChecks(deps),

    async checkEmail(email: string): Promise<{ exists: boolean; email: string }> {
      const normalised = normaliseEmail(email)
      return { exists: (await users.findAccountByEmail(db, normalised)) !== undefined, email: normalised }
    },
  }
}

export type AuthService = ReturnType<typeof createAuthService>
