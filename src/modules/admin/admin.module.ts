import { defineModule } from '../../platform/module.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { RolesService } from '../roles/roles.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { adminErrors } from './admin.errors.ts'
import { adminEvents } from './admin.events.ts'
import { adminRoutes } from './admin.routes.ts'
import { adminStatsRoutes } from './admin.stats.routes.ts'
import { createAdminService } from './admin.service.ts'

/**
 * Staff operations that span modules: staff accounts and their roles, deactivation and
 * suspension, the staff listing of users, and the statistics every module contributes to. Owns
 * no tables. (A module's own staff routes, such as /admin/services or /admin/roles, live in that
 * module's `<subject>.admin.routes.ts`.)
 */
export const adminModule = defineModule({
  name: 'admin',
  needs: ['users', 'roles', 'catalogue', 'audit'],
  tables: {},
  create: ({ db, clock, outbox, statistics, realtime }, deps: { users: UsersService; roles: RolesService; catalogue: CatalogueService; audit: AuditService }) =>
    createAdminService({ db, clock, outbox, statistics, realtime, ...deps }),
  routes: (api) => async (app) => {
    await app.register(adminRoutes, { admin: api })
    await app.register(adminStatsRoutes, { admin: api })
  },
  events: Object.values(adminEvents),
  errors: adminErrors,
})

export type { AdminService } from './admin.service.ts'
