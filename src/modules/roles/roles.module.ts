import { defineModule } from '../../platform/module.ts'
import type { AuditService } from '../audit/audit.module.ts'
import { rolesAdminRoutes } from './roles.admin.routes.ts'
import { createRolesService } from './roles.service.ts'
import { roles, userRoles } from './roles.table.ts'

/** Named sets of permissions given to staff (decision 0006); managed by a superuser under /admin/roles. */
export const rolesModule = defineModule({
  name: 'roles',
  needs: ['audit'],
  tables: { roles, userRoles },
  create: ({ db, clock }, { audit }: { audit: AuditService }) => createRolesService({ db, clock, audit }),
  routes: (api) => async (app) => {
    await app.register(rolesAdminRoutes, { roles: api })
  },
})

export type { Role, RolesService } from './roles.service.ts'
export { Role as RoleSchema } from './roles.schemas.ts'
