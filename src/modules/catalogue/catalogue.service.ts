import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import { defineStats, readCounters } from '../../platform/statistics/statistics.ts'
import { ServicesStats } from './services.schemas.ts'
import { serviceStatuses, type ServiceStatus } from './services.table.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createCategoriesService } from './categories.service.ts'
import { changingTheTree, createCategoryTree } from './category-tree.cache.ts'
import { createServiceBrowsing } from './service-browsing.service.ts'
import { createServiceCounters } from './service-counters.service.ts'
import { createServiceGallery } from './service-gallery.service.ts'
import { createServiceModeration } from './service-moderation.service.ts'
import { createServiceOffers } from './service-offers.service.ts'
import { createServiceSaving } from './service-saving.service.ts'

export interface CatalogueDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  /** Tells every instance that the category tree changed; lists the users online for the `sellerOnline` filter. */
  realtime: Pick<RealtimeHub, 'signal' | 'onSignal' | 'onlineUsers'>
  audit: Pick<AuditService, 'record'>
  uploads: Pick<
    UploadsService,
    'bindUpload' | 'storeFiles' | 'recordFiles' | 'discardFiles' | 'detachFile' | 'reorderFiles' | 'filesOf' | 'publicFileUrlSql' | 'publicFilesJsonSql'
  >
  users: Pick<UsersService, 'publicSummarySql' | 'sellerLevelSql' | 'atSellerLevelSql' | 'sellersAboveNewSql' | 'levelsAboveNewSql'>
}

/**
 * The catalogue's API: categories, and services ("gigs", the marketplace's listings) read,
 * offered, moderated and illustrated, each group of use cases in its own file.
 */
export function createCatalogueService(deps: CatalogueDeps) {
  const browsing = createServiceBrowsing(deps)
  // `describe` builds answers for the other use cases, and `views` their SQL; neither is part of the module's API.
  const { describe: _describe, views, ...reads } = browsing
  const counters = createServiceCounters()
  const tree = createCategoryTree(deps)
  return {
    ...createCategoriesService({ ...deps, tree }),
    ...reads,
    ...counters,
    ...changingTheTree(tree, createServiceOffers({ ...deps, browsing, counters }), ['updateService', 'deleteService']),
    ...changingTheTree(tree, createServiceModeration({ ...deps, browsing }), ['approveService', 'pauseService', 'resumeService']),
    ...createServiceGallery({ ...deps, browsing }),
    ...createServiceSaving({ ...deps, views }),

    /** The services section of `GET /admin/stats`: live services by status, from trigger-kept counters. */
    statistics: defineStats('services', ServicesStats, async (executor) => {
      const counters = await readCounters(executor, 'services')
      const byStatus = Object.fromEntries(serviceStatuses.map((status) => [status, counters.get(status) ?? 0])) as Record<ServiceStatus, number>
      return { total: serviceStatuses.reduce((sum, status) => sum + byStatus[status], 0), byStatus }
    }),
  }
}

export type CatalogueService = ReturnType<typeof createCatalogueService>
