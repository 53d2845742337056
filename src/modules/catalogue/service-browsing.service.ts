import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createCommonLists } from './service-common-lists.service.ts'
import { createFilteredLists } from './service-filtered-lists.service.ts'
import { isCommon, type ServiceListQuery } from './service-list-pages.ts'
import { createServiceReading } from './service-reading.service.ts'
import { createSellerPresence } from './seller-presence.service.ts'
import type { ServiceViews } from './services.repository.ts'

export interface BrowsingDeps {
  db: Db
  clock: Clock
  realtime: Pick<RealtimeHub, 'onlineUsers'>
  uploads: Pick<UploadsService, 'publicFileUrlSql' | 'publicFilesJsonSql'>
  users: Pick<UsersService, 'publicSummarySql' | 'sellerLevelSql' | 'atSellerLevelSql' | 'sellersAboveNewSql' | 'levelsAboveNewSql'>
}

/**
 * Reading services: one, a page of them, search, and the full answer a viewer may see. Each
 * list picks the statement that serves it: a common list (no search, filter or facets) or a
 * filtered list or search, one prepared statement per shape either way.
 */
export function createServiceBrowsing(deps: BrowsingDeps) {
  const { db, clock, realtime, uploads, users } = deps
  const views: ServiceViews = {
    sellerOf: (userId) => users.publicSummarySql(userId),
    levelOf: (userId) => users.sellerLevelSql(userId),
    atLevels: (userId, levels) => users.atSellerLevelSql(userId, levels),
    sellersAbove: (levels) => users.sellersAboveNewSql(levels),
    levelsAboveNew: () => users.levelsAboveNewSql(),
    bannerOf: (serviceId) => uploads.publicFileUrlSql('service', serviceId, 'service_banner'),
    galleryOf: (serviceId) => uploads.publicFilesJsonSql('service', serviceId, 'service_gallery'),
  }
  const reading = createServiceReading({ db, views })
  const common = createCommonLists({ db, views })
  const filtered = createFilteredLists({ db, views, presence: createSellerPresence({ db, clock, realtime }) })

  return {
    ...reading,
    views,

    /** `GET /services`: the public catalogue. An unknown category is an empty result. */
    async listServices(query: ServiceListQuery & { category?: string }) {
      if (isCommon(query)) return (await common.listCommon(query, query.category)) ?? common.emptyAnswer(query)
      return (await filtered.listFiltered(query, query.category)).answer
    },

    /** `GET /categories/{id or slug}/services`: the category and its subcategories. */
    async listCategoryServices(idOrSlug: string, query: ServiceListQuery) {
      if (isCommon(query)) return (await common.listCommon(query, idOrSlug)) ?? notFoundCategory()
      const { categoryFound, answer } = await filtered.listFiltered(query, idOrSlug)
      return categoryFound ? answer : notFoundCategory()
    },
  }
}

const notFoundCategory = (): never => {
  throw notFound('Category')
}

export type ServiceBrowsing = ReturnType<typeof createServiceBrowsing>
