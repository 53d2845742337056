import { defineModule } from '../../platform/module.ts'
import { rolesAdminRoutes } from './roles.admin.routes.ts'
import { createRolesService } from './roles.service.ts'
import { roles, userRoles } from './roles.table.ts'

/** Named sets of permissions given to staff (spec 2.2); managed by a superuser under /admin/roles. */
export const rolesModule = defineModule({
  name: 'roles',
  needs: [],
  tables: { roles, userRoles },
  create: ({ db, clock }) => createRolesService({ db, clock }),
  routes: (api) => async (app) => {
    await app.register(rolesAdminRoutes, { roles: api })
  },
})

export type { Role, RolesService } from './roles.service.ts'
export { Role as RoleSchema } from './roles.schemas.ts'
