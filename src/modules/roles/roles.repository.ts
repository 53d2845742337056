import { asc, eq, inArray } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { roles, userRoles, type RoleRow } from './roles.table.ts'

export function createRolesRepository(db: Executor) {
  return {
    list: (): Promise<RoleRow[]> => db.select().from(roles).orderBy(asc(roles.name)),

    async findById(id: string): Promise<RoleRow | undefined> {
      const [row] = await db.select().from(roles).where(eq(roles.id, id))
      return row
    },

    async findByName(name: string): Promise<RoleRow | undefined> {
      const [row] = await db.select().from(roles).where(eq(roles.name, name))
      return row
    },

    async findByIds(ids: string[]): Promise<RoleRow[]> {
      if (ids.length === 0) return []
      return db.select().from(roles).where(inArray(roles.id, ids))
    },

    async insert(row: RoleRow): Promise<RoleRow> {
      const [inserted] = await db.insert(roles).values(row).returning()
      return inserted!
    },

    async update(id: string, patch: Partial<Pick<RoleRow, 'name' | 'permissions' | 'updatedAt'>>): Promise<RoleRow | undefined> {
      const [row] = await db.update(roles).set(patch).where(eq(roles.id, id)).returning()
      return row
    },

    async delete(id: string): Promise<RoleRow | undefined> {
      const [deleted] = await db.delete(roles).where(eq(roles.id, id)).returning()
      return deleted
    },

    async rolesOfUser(userId: string): Promise<RoleRow[]> {
      const rows = await db
        .select({ role: roles })
        .from(userRoles)
        .innerJoin(roles, eq(userRoles.roleId, roles.id))
        .where(eq(userRoles.userId, userId))
        .orderBy(asc(roles.name))
      return rows.map((row) => row.role)
    },

    async replaceUserRoles(userId: string, roleIds: string[]): Promise<void> {
      await db.delete(userRoles).where(eq(userRoles.userId, userId))
      if (roleIds.length > 0) await db.insert(userRoles).values(roleIds.map((roleId) => ({ userId, roleId })))
    },
  }
}
