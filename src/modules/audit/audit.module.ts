import { defineModule } from '../../platform/module.ts'
import { auditRoutes } from './audit.routes.ts'
import { createAuditService } from './audit.service.ts'
import { auditLog } from './audit.table.ts'

/**
 * The audit log of staff actions. Listed early so every module that acts for staff can `need`
 * it and call `audit.record(tx, entry)` in the transaction of the action.
 */
export const auditModule = defineModule({
  name: 'audit',
  needs: [],
  tables: { auditLog },
  create: ({ db, clock }) => createAuditService({ db, clock }),
  routes: (api) => async (app) => {
    await app.register(auditRoutes, { audit: api })
  },
})

export type { AuditEntry, AuditService } from './audit.service.ts'
