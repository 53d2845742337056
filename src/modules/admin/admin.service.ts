import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { hashPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import { forbidden, notFound, unprocessable } from '../../http/errors.ts'
import type { Actor } from '../roles/permissions.ts'
import type { Role, RolesService } from '../roles/roles.service.ts'
import { toUser, type Account, type User, type UsersService } from '../users/users.service.ts'

export interface StaffInput {
  fullName: string
  username: string
  email: string
  password: string
  roleId?: string
}

export type StaffUser = User & { roles: Role[] }

/** Admin operations; owns no tables and works through the users and roles services. */
export function createAdminService(deps: {
  db: Db
  clock: Clock
  users: Pick<UsersService, 'createAccount' | 'lockAccount' | 'updateAccount'>
  roles: Pick<RolesService, 'assignRoles'>
}) {
  const { db, clock, users, roles } = deps

  /** Only a superuser acts on another staff or superuser account; nobody switches themselves off. */
  function assertMayManage(actor: Actor, target: Account): void {
    if (target.id === actor.id) throw unprocessable('CANNOT_MODIFY_SELF', 'You cannot change the status of your own account')
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
        if (!target.isStaff) throw unprocessable('NOT_STAFF', 'Roles can only be given to staff accounts')
        const assigned = await roles.assignRoles(tx, userId, roleIds)
        return { ...toUser(target), roles: assigned }
      })
    },

    deactivateUser: (actor: Actor, userId: string) => setActive(actor, userId, false),
    reactivateUser: (actor: Actor, userId: string) => setActive(actor, userId, true),
  }
}

export type AdminService = ReturnType<typeof createAdminService>
