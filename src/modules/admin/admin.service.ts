import type { Db, Tx } from '../../db/client.ts'
import { toPage, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { StatisticsRegistry } from '../../platform/statistics/statistics.ts'
import { adminEvents } from './admin.events.ts'
import { createAdminStatistics } from './admin-statistics.service.ts'
import { alreadySuspended, cannotModifySelf, notSuspended } from './admin.errors.ts'
import { createStaffAccounts } from './staff-accounts.service.ts'
import type { Actor } from '../../access/access.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { RolesService } from '../roles/roles.module.ts'
import { statusOf, toUser, type Account, type User, type UserListFilter, type UsersService } from '../users/users.module.ts'

export type { StaffInput, StaffUser, SuperuserInput } from './staff-accounts.service.ts'

/** What staff see of an account in the admin console: the account, its suspension and its services count. */
const toAdminUser = (row: Account, servicesCount: number) => ({
  ...toUser(row),
  suspendedAt: row.suspendedAt?.toISOString() ?? null,
  suspensionReason: row.suspensionReason,
  servicesCount,
})

/** The fields of an account an audit row records around a status change. */
const accessState = (row: Account) => ({ status: statusOf(row), isActive: row.isActive, suspendedAt: row.suspendedAt?.toISOString() ?? null })

/** Only a superuser acts on another staff or superuser account; nobody switches themselves off. */
function assertMayManage(actor: Actor, target: Account): void {
  if (target.id === actor.id) throw cannotModifySelf()
  if ((target.isStaff || target.isSuperuser) && !actor.isSuperuser) throw forbidden('Only a superuser may act on a staff account')
}

/** Locks the account, checks the actor may act on it, applies `change` and records the action, in one transaction. */
function changeAccess(deps: { db: Db; users: Pick<UsersService, 'lockAccount'>; audit: Pick<AuditService, 'record'> }, actor: Actor, userId: string, action: string, reason: string | null, change: (tx: Tx, target: Account) => Promise<Account>): Promise<Account> {
  const { db, users, audit } = deps
  return db.transaction(async (tx) => {
    const target = await users.lockAccount(tx, userId)
    if (!target) throw notFound('User')
    assertMayManage(actor, target)
    const updated = await change(tx, target)
    await audit.record(tx, { action, actor, targetType: 'user', targetId: userId, reason, before: accessState(target), after: accessState(updated) })
    return updated
  })
}

/**
 * Staff operations that span modules; owns no tables and works through the users, roles, catalogue
 * and audit services. Staff accounts and statistics are use cases of their own files; this adds
 * the staff's listing of users and their access (deactivation, suspension).
 */
export function createAdminService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  users: Pick<UsersService, 'findAccountById' | 'createAccount' | 'lockAccount' | 'updateAccount' | 'listAccounts' | 'hasSuperuser' | 'lockFirstSuperuser'>
  roles: Pick<RolesService, 'assignRoles' | 'rolesOf'>
  catalogue: Pick<CatalogueService, 'countServicesBySellers'>
  audit: Pick<AuditService, 'record'>
  realtime: Pick<RealtimeHub, 'disconnectUser'>
  statistics: StatisticsRegistry
}) {
  const { db, clock, outbox, users, roles, catalogue, realtime } = deps

  async function withServicesCount(row: Account) {
    const counts = await catalogue.countServicesBySellers(db, [row.id])
    return toAdminUser(row, counts.get(row.id) ?? 0)
  }

  async function setActive(actor: Actor, userId: string, isActive: boolean): Promise<User> {
    const row = await changeAccess(deps, actor, userId, isActive ? 'user.reactivate' : 'user.deactivate', null, (tx, target) =>
      users.updateAccount(tx, userId, {
        isActive,
        // Staff decided this account's state: an unused activation link must not override it.
        ...(!target.activatedAt && { activatedAt: clock.now() }),
      }),
    )
    // A deactivated account is locked out at once, its open sockets included.
    if (!isActive) await realtime.disconnectUser(userId)
    return toUser(row)
  }

  return {
    ...createStaffAccounts(deps),

    /** `GET /users` and `GET /admin/users` (view_users): accounts with the number of services each has (not deleted). */
    async listUsers(filter: UserListFilter, page: PageRequest) {
      const accounts = await users.listAccounts(db, filter, page)
      const servicesCounts = await catalogue.countServicesBySellers(
        db,
        accounts.items.map((account) => account.id),
      )
      return toPage(
        accounts.items.map((account) => ({ ...account, servicesCount: servicesCounts.get(account.id) ?? 0 })),
        accounts.pagination.total,
        page,
      )
    },

    /** `GET /admin/users/{id}` (view_users): one account as the staff listing shows it. */
    async getUser(userId: string) {
      const row = await users.findAccountById(db, userId)
      if (!row) throw notFound('User')
      const [shown, assigned] = await Promise.all([withServicesCount(row), roles.rolesOf(db, userId)])
      return { ...shown, roles: assigned }
    },

    deactivateUser: (actor: Actor, userId: string) => setActive(actor, userId, false),
    reactivateUser: (actor: Actor, userId: string) => setActive(actor, userId, true),

    /**
     * `POST /admin/users/{id}/suspend` (manage_users; staff accounts: superuser only). Locks the
     * user out at once: every request re-reads the account, so access tokens, refresh and login
     * answer 401 from the commit on, and the token version moves, so tokens issued before stay
     * dead after an unsuspension. This is the one function through which suspension happens:
     * whatever else must follow it (closing the user's open sockets) hooks in here.
     */
    async suspendUser(actor: Actor, userId: string, reason: string) {
      const row = await changeAccess(deps, actor, userId, 'user.suspend', reason.trim(), async (tx, target) => {
        if (target.suspendedAt) throw alreadySuspended()
        const now = clock.now()
        await emitEvent(outbox, tx, adminEvents.userSuspended, { userId }, now)
        return users.updateAccount(tx, userId, { suspendedAt: now, suspensionReason: reason.trim(), tokenVersion: target.tokenVersion + 1 })
      })
      // After the commit: the user's open sockets, on every instance, close with 4401.
      await realtime.disconnectUser(userId)
      return withServicesCount(row)
    },

    /** `POST /admin/users/{id}/unsuspend`: the user may log in again (old tokens stay refused). */
    async unsuspendUser(actor: Actor, userId: string) {
      const row = await changeAccess(deps, actor, userId, 'user.unsuspend', null, async (tx, target) => {
        if (!target.suspendedAt) throw notSuspended()
        await emitEvent(outbox, tx, adminEvents.userUnsuspended, { userId }, clock.now())
        return users.updateAccount(tx, userId, { suspendedAt: null, suspensionReason: null })
      })
      return withServicesCount(row)
    },

    ...createAdminStatistics(deps),
  }
}

export type AdminService = ReturnType<typeof createAdminService>
