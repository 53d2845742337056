import type { Db, Executor, Tx } from '../../db/client.ts'
import { uniqueAsFieldError } from '../../db/errors.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import type { Actor, Permission } from '../../access/access.ts'
import type { AuditService } from '../audit/audit.module.ts'
import { createRolesRepository } from './roles.repository.ts'
import type { RoleRow } from './roles.table.ts'

export interface RoleInput {
  name: string
  permissions: Permission[]
}

export const toRole = (row: RoleRow) => ({
  id: row.id,
  name: row.name,
  permissions: row.permissions as Permission[],
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})
export type Role = ReturnType<typeof toRole>

const unique = <T>(values: T[]): T[] => [...new Set(values)]

/** What an audit row keeps of a role. */
const roleState = (row: RoleRow) => ({ name: row.name, permissions: row.permissions })

export function createRolesService(deps: { db: Db; clock: Clock; audit: Pick<AuditService, 'record'> }) {
  const { db, clock, audit } = deps

  const NAME_TAKEN = 'is already used by another role'

  async function assertNameFree(tx: Tx, name: string, exceptId?: string): Promise<void> {
    const existing = await createRolesRepository(tx).findByName(name)
    if (existing && existing.id !== exceptId) throw fieldError('name', NAME_TAKEN)
  }

  /** Two concurrent requests can both pass the name check; the unique index decides. */
  const nameRace = <T>(work: () => Promise<T>) => uniqueAsFieldError('roles_name_unique', 'name', NAME_TAKEN, work)

  return {
    listRoles: async (): Promise<Role[]> => (await createRolesRepository(db).list()).map(toRole),

    async getRole(id: string): Promise<Role> {
      const row = await createRolesRepository(db).findById(id)
      if (!row) throw notFound('Role')
      return toRole(row)
    },

    createRole: (actor: Pick<Actor, 'id'>, input: RoleInput): Promise<Role> =>
      nameRace(() => db.transaction(async (tx) => {
        await assertNameFree(tx, input.name)
        const now = clock.now()
        const row = await createRolesRepository(tx).insert({
          id: newId(),
          name: input.name,
          permissions: unique(input.permissions),
          createdAt: now,
          updatedAt: now,
        })
        await audit.record(tx, { action: 'role.create', actor, targetType: 'role', targetId: row.id, after: roleState(row) })
        return toRole(row)
      })),

    updateRole: (actor: Pick<Actor, 'id'>, id: string, input: Partial<RoleInput>): Promise<Role> =>
      nameRace(() => db.transaction(async (tx) => {
        const roles = createRolesRepository(tx)
        const before = await roles.findById(id)
        if (!before) throw notFound('Role')
        if (input.name !== undefined) await assertNameFree(tx, input.name, id)
        const row = (await roles.update(id, {
          ...(input.name !== undefined && { name: input.name }),
          ...(input.permissions !== undefined && { permissions: unique(input.permissions) }),
          updatedAt: clock.now(),
        }))!
        await audit.record(tx, { action: 'role.update', actor, targetType: 'role', targetId: id, before: roleState(before), after: roleState(row) })
        return toRole(row)
      })),

    deleteRole: (actor: Pick<Actor, 'id'>, id: string): Promise<void> =>
      db.transaction(async (tx) => {
        const removed = await createRolesRepository(tx).delete(id)
        if (!removed) throw notFound('Role')
        await audit.record(tx, { action: 'role.delete', actor, targetType: 'role', targetId: id, before: roleState(removed) })
      }),

    /** The union of the permissions of the user's roles. */
    async permissionsOf(executor: Executor, userId: string): Promise<Set<Permission>> {
      const roles = await createRolesRepository(executor).rolesOfUser(userId)
      return new Set(roles.flatMap((role) => role.permissions as Permission[]))
    },

    rolesOf: async (executor: Executor, userId: string): Promise<Role[]> => (await createRolesRepository(executor).rolesOfUser(userId)).map(toRole),

    /** Replaces a user's roles inside the caller's transaction; an unknown role id is a field error. */
    async assignRoles(tx: Tx, userId: string, roleIds: string[], field = 'roleIds'): Promise<Role[]> {
      const roles = createRolesRepository(tx)
      const wanted = unique(roleIds)
      const found = await roles.findByIds(wanted)
      if (found.length !== wanted.length) throw fieldError(field, 'names a role that does not exist')
      await roles.replaceUserRoles(userId, wanted)
      return found.map(toRole).sort((a, b) => a.name.localeCompare(b.name))
    },
  }
}

export type RolesService = ReturnType<typeof createRolesService>
