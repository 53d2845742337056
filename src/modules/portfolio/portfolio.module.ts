import { defineModule } from '../../platform/module.ts'
import { portfolioErrors } from './portfolio.errors.ts'
import { portfolioRoutes } from './portfolio.routes.ts'
import { createPortfolioService } from './portfolio.service.ts'
import { education, experiences, projects, skills } from './portfolio.table.ts'

/** A user's skills, projects, experience and education (decision 0009). */
export const portfolioModule = defineModule({
  name: 'portfolio',
  needs: [],
  tables: { skills, projects, experiences, education },
  create: ({ db, clock }) => createPortfolioService({ db, clock }),
  routes: (api) => async (app) => {
    await app.register(portfolioRoutes, { portfolio: api })
  },
  errors: portfolioErrors,
})

export type { PortfolioService } from './portfolio.service.ts'
export { Portfolio } from './portfolio.schemas.ts'
