import type { Db, Tx } from '../../db/client.ts'
import { hashPassword } from '../../lib/passwords.ts'
import { normaliseEmail } from '../../lib/text.ts'
import { notFound } from '../../lib/errors.ts'
import { notStaff } from './admin.errors.ts'
import type { Actor } from '../../access/access.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { Role, RolesService } from '../roles/roles.module.ts'
import { toUser, type User, type UsersService } from '../users/users.module.ts'

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

/** Staff accounts: the superusers made outside the API, and the staff a superuser creates and gives roles. */
export function createStaffAccounts(deps: {
  db: Db
  users: Pick<UsersService, 'createAccount' | 'lockAccount' | 'hasSuperuser' | 'lockFirstSuperuser'>
  roles: Pick<RolesService, 'assignRoles' | 'rolesOf'>
  audit: Pick<AuditService, 'record'>
}) {
  const { db, users, roles, audit } = deps

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
  }
}
