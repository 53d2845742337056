import type { Db } from '../../db/client.ts'
import { toPage, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { hashPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import { forbidden, notFound } from '../../lib/errors.ts'
import { cannotModifySelf, notStaff } from './admin.errors.ts'
import type { Actor } from '../../access/access.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { Role, RolesService } from '../roles/roles.module.ts'
import { toUser, type Account, type User, type UserListFilter, type UsersService } from '../users/users.module.ts'

export interface StaffInput {
  fullName: string
  username: string
  email: string
  password: string
  roleId?: string
}

export type StaffUser = User & { roles: Role[] }

/** Staff operations that span modules; owns no tables and works through the users, roles and catalogue services. */
export function createAdminService(deps: {
  db: Db
  clock: Clock
  users: Pick<UsersService, 'createAccount' | 'lockAccount' | 'updateAccount' | 'listAccounts'>
  roles: Pick<RolesService, 'assignRoles'>
  catalogue: Pick<CatalogueService, 'countServicesBySellers'>
}) {
  const { db, clock, users, roles, catalogue } = deps

  /** Only a superuser acts on another staff or superuser account; nobody switches themselves off. */
  function assertMayManage(actor: Actor, target: Account): void {
    if (target.id === actor.id) throw cannotModifySelf()
    if ((target.isStaff || target.isSuperuser) && !actor.isSuperuser) throw forbidden('Only a superuser may act on a staff account')
  }

  async function setActive(actor: Actor, userId: string, isActive: boolean): Promise<User> {
    return db.transaction(async (tx) => {
      const target = await users.lockAccount(tx, userId)
      if (!target) throw notFound('User')
      assertMayManage(actor, target)
      const updated = await users.updateAccount(tx, userId, {
        isActive,
        // Staff decided this account's state: an unused activation link must not override it.
        ...(!target.activatedAt && { activatedAt: clock.now() }),
      })
      return toUser(updated)
    })
  }

  return {
    async createStaff(input: StaffInput): Promise<StaffUser> {
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
        return { ...toUser(user), roles: assigned }
      })
    },

    async setStaffRoles(userId: string, roleIds: string[]): Promise<StaffUser> {
      return db.transaction(async (tx) => {
        const target = await users.lockAccount(tx, userId)
        if (!target) throw notFound('User')
        if (!target.isStaff) throw notStaff()
        const assigned = await roles.assignRoles(tx, userId, roleIds)
        return { ...toUser(target), roles: assigned }
      })
    },

    /** `GET /users` (view_users): accounts with the number of services each has (not deleted). */
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

    deactivateUser: (actor: Actor, userId: string) => setActive(actor, userId, false),
    reactivateUser: (actor: Actor, userId: string) => setActive(actor, userId, true),
  }
}

export type AdminService = ReturnType<typeof createAdminService>
