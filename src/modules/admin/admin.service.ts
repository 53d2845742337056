import type { Db, Tx } from '../../db/client.ts'
import { toPage, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { hashPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { StatisticsRegistry } from '../../platform/statistics/statistics.ts'
import { adminEvents } from './admin.events.ts'
import { dailySeries, type SeriesMetric } from './admin.series.ts'
import { alreadySuspended, cannotModifySelf, notStaff, notSuspended } from './admin.errors.ts'
import type { Actor } from '../../access/access.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { Role, RolesService } from '../roles/roles.module.ts'
import { statusOf, toUser, type Account, type User, type UserListFilter, type UsersService } from '../users/users.module.ts'

export interface StaffInput {
  fullName: string
  username: string
  email: string
  password: string
  roleId?: string
}

export type StaffUser = User & { roles: Role[] }

/** A superuser made outside the API: by `cli create-superuser`, or from SUPERUSER_* at start. */
export interface SuperuserInput {
  email: string
  password: string
  fullName?: string
  username?: string
}

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

/** Staff operations that span modules; owns no tables and works through the users, roles, catalogue and audit services. */
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
  const { db, clock, outbox, users, roles, catalogue, audit, statistics, realtime } = deps

  /** Locks the account, checks the actor may act on it, applies `change` and records the action, in one transaction. */
  function changeAccess(actor: Actor, userId: string, action: string, reason: string | null, change: (tx: Tx, target: Account) => Promise<Account>): Promise<Account> {
    return db.transaction(async (tx) => {
      const target = await users.lockAccount(tx, userId)
      if (!target) throw notFound('User')
      assertMayManage(actor, target)
      const updated = await change(tx, target)
      await audit.record(tx, { action, actor, targetType: 'user', targetId: userId, reason, before: accessState(target), after: accessState(updated) })
      return updated
    })
  }

  async function withServicesCount(row: Account) {
    const counts = await catalogue.countServicesBySellers(db, [row.id])
    return toAdminUser(row, counts.get(row.id) ?? 0)
  }

  async function setActive(actor: Actor, userId: string, isActive: boolean): Promise<User> {
    const row = await changeAccess(actor, userId, isActive ? 'user.reactivate' : 'user.deactivate', null, (tx, target) =>
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

  /** No audit row: nobody acted through the API, and the audit log needs an actor. */
  const insertSuperuser = (tx: Tx, input: SuperuserInput, passwordHash: string) =>
    users.createAccount(tx, {
      email: normaliseEmail(input.email),
      fullName: (input.fullName ?? 'Administrator').trim(),
      username: input.username,
      passwordHash,
      isActive: true,
      isStaff: true,
      isSuperuser: true,
    })

  return {
    /** An active superuser, whatever exists already; a registered e-mail or username is a field error. */
    async createSuperuser(input: SuperuserInput): Promise<User> {
      const passwordHash = await hashPassword(input.password)
      return toUser(await db.transaction((tx) => insertSuperuser(tx, input, passwordHash)))
    },

    /**
     * The first administrator of a deployment: created when no superuser exists (active or not),
     * and undefined otherwise. Never changes an existing account, so the variables it comes from
     * can stay set. Instances starting together create one.
     */
    async ensureFirstSuperuser(input: SuperuserInput): Promise<User | undefined> {
      // Every start after the first stops here, without hashing the password.
      if (await users.hasSuperuser(db)) return undefined
      const passwordHash = await hashPassword(input.password)
      const created = await db.transaction(async (tx) => {
        await users.lockFirstSuperuser(tx)
        return (await users.hasSuperuser(tx)) ? undefined : insertSuperuser(tx, input, passwordHash)
      })
      return created && toUser(created)
    },

    async createStaff(actor: Actor, input: StaffInput): Promise<StaffUser> {
      const passwordHash = await hashPassword(input.password)
      return db.transaction(async (tx) => {
        const user = await users.createAccount(tx, {
          email: normaliseEmail(input.email),
          fullName: input.fullName.trim(),
          username: input.username,
          passwordHash,
          isActive: true,
          isStaff: true,
        })
        const assigned = input.roleId ? await roles.assignRoles(tx, user.id, [input.roleId], 'roleId') : []
        await audit.record(tx, {
          action: 'staff.create',
          actor,
          targetType: 'user',
          targetId: user.id,
          after: { email: user.email, username: user.username, isStaff: true, roleIds: assigned.map((role) => role.id) },
        })
        return { ...toUser(user), roles: assigned }
      })
    },

    async setStaffRoles(actor: Actor, userId: string, roleIds: string[]): Promise<StaffUser> {
      return db.transaction(async (tx) => {
        const target = await users.lockAccount(tx, userId)
        if (!target) throw notFound('User')
        if (!target.isStaff) throw notStaff()
        const before = await roles.rolesOf(tx, userId)
        const assigned = await roles.assignRoles(tx, userId, roleIds)
        await audit.record(tx, {
          action: 'staff.set_roles',
          actor,
          targetType: 'user',
          targetId: userId,
          before: { roleIds: before.map((role) => role.id) },
          after: { roleIds: assigned.map((role) => role.id) },
        })
        return { ...toUser(target), roles: assigned }
      })
    },

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
      const row = await changeAccess(actor, userId, 'user.suspend', reason.trim(), async (tx, target) => {
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
      const row = await changeAccess(actor, userId, 'user.unsuspend', null, async (tx, target) => {
        if (!target.suspendedAt) throw notSuspended()
        await emitEvent(outbox, tx, adminEvents.userUnsuspended, { userId }, clock.now())
        return users.updateAccount(tx, userId, { suspendedAt: null, suspensionReason: null })
      })
      return withServicesCount(row)
    },

    /** `GET /admin/stats`: every module's section, collected in parallel. */
    async collectStatistics(): Promise<Record<string, Record<string, unknown>>> {
      const sections = statistics.sections()
      const figures = await Promise.all(sections.map((section) => section.collect(db)))
      return Object.fromEntries(sections.map((section, index) => [section.name, figures[index]!]))
    },

    /** `GET /admin/stats/series`: one metric per day over the last `days` days. */
    async statisticsSeries(metric: SeriesMetric, days: number) {
      const points = await dailySeries(db, metric, days, clock.now())
      return { metric, unit: metric === 'revenue' ? ('cents' as const) : ('count' as const), total: points.reduce((sum, point) => sum + point.value, 0), points }
    },

    /** The sections `GET /admin/stats` answers with (its response schema is built from them). */
    statisticsSections: () => statistics.sections(),
  }
}

export type AdminService = ReturnType<typeof createAdminService>
