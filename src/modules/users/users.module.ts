import { defineModule } from '../../platform/module.ts'
import type { PortfolioService } from '../portfolio/portfolio.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import { usersRoutes } from './users.routes.ts'
import { createUsersService } from './users.service.ts'
import { users } from './users.table.ts'

/** Accounts and profiles: the account rows other modules build on, the own profile and the public one. */
export const usersModule = defineModule({
  name: 'users',
  needs: ['uploads', 'portfolio'],
  tables: { users },
  create: ({ db, clock }, deps: { uploads: UploadsService; portfolio: PortfolioService }) => createUsersService({ db, clock, ...deps }),
  routes: (api, { config }) => async (app) => {
    await app.register(usersRoutes, { users: api, tmpDir: config.tmpDir })
  },
  statistics: (api) => api.statistics,
})

export { statusOf, toUser, type Account, type User, type UsersService } from './users.service.ts'
export { userRoles, userStatuses, type AccountStanding, type IdentityJson, type UserListFilter } from './users.repository.ts'
export { Email, FullName, Identity, ListUsersQuery, Password, SellerLevel, sellerLevels, User as UserSchema, Username, UserListItem, UserSummary } from './users.schemas.ts'
