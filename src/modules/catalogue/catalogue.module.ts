import { defineModule } from '../../platform/module.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { catalogueErrors } from './catalogue.errors.ts'
import { catalogueEvents } from './catalogue.events.ts'
import { createCatalogueService } from './catalogue.service.ts'
import { categoriesRoutes } from './categories.routes.ts'
import { categories, categoryServiceCounts } from './categories.table.ts'
import { savedServices } from './saved-services.table.ts'
import { servicesAdminRoutes } from './services.admin.routes.ts'
import { servicesRoutes } from './services.routes.ts'
import { searchWords, serviceExtras, servicePackages, services } from './services.table.ts'

/** Categories and services ("gigs"): offers, moderation, images, browsing, search and facets, and buyers' saved services. */
export const catalogueModule = defineModule({
  name: 'catalogue',
  needs: ['users', 'uploads', 'audit'],
  tables: { categories, categoryServiceCounts, services, servicePackages, serviceExtras, searchWords, savedServices },
  create: ({ db, clock, outbox, realtime }, deps: { users: UsersService; uploads: UploadsService; audit: AuditService }) => createCatalogueService({ db, clock, outbox, realtime, ...deps }),
  routes: (api, { config }) => async (app) => {
    await app.register(servicesRoutes, { services: api, tmpDir: config.tmpDir })
    await app.register(servicesAdminRoutes, { services: api })
    await app.register(categoriesRoutes, { categories: api, envelope: config.responseEnvelope })
  },
  statistics: (api) => api.statistics,
  events: Object.values(catalogueEvents),
  errors: catalogueErrors,
})

export type { CatalogueService } from './catalogue.service.ts'
export type { OfferExtra, OfferPackage, ServiceFields } from './service-offers.service.ts'
export type { OfferJson, PricedChoice } from './service-counters.repository.ts'
export { Offer } from './services.schemas.ts'
