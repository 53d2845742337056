import type { Db } from '../../db/client.ts'
import { notFound } from '../../lib/errors.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createCommonLists } from './service-common-lists.service.ts'
import { createFilteredLists } from './service-filtered-lists.service.ts'
import { commonSearchOf, isCommon, type ServiceListQuery } from './service-list-pages.ts'
import { createServiceReading } from './service-reading.service.ts'
import { createServicesRepository, type ServiceViews } from './services.repository.ts'

export interface BrowsingDeps {
  db: Db
  uploads: Pick<UploadsService, 'publicFileUrlSql' | 'publicFilesJsonSql'>
  users: Pick<UsersService, 'publicSummarySql'>
}

/**
 * Reading services: one, a page of them, search, and the full answer a viewer may see. Each
 * list picks the path that serves it (a common list or search in one prepared statement, a
 * filtered list built per request).
 */
export function createServiceBrowsing(deps: BrowsingDeps) {
  const { db, uploads, users } = deps
  const views: ServiceViews = {
    sellerOf: (userId) => users.publicSummarySql(userId),
    bannerOf: (serviceId) => uploads.publicFileUrlSql('service', serviceId, 'service_banner'),
    galleryOf: (serviceId) => uploads.publicFilesJsonSql('service', serviceId, 'service_gallery'),
  }
  const reading = createServiceReading({ db, views })
  const common = createCommonLists({ db, views })
  const filtered = createFilteredLists({ db, views })

  async function resolveCategoryIds(idOrSlug: string): Promise<string[] | undefined> {
    const ids = await createServicesRepository(db).categoryIdsByRef(idOrSlug)
    return ids.length > 0 ? ids : undefined
  }

  return {
    ...reading,

    /** `GET /services`: the public catalogue. An unknown category is an empty result. */
    async listServices(query: ServiceListQuery & { category?: string }) {
      if (isCommon(query)) return (await common.listCommon(query, query.category)) ?? common.emptyAnswer(query)
      const search = commonSearchOf(query)
      if (search !== undefined) return common.searchCommon(query, search)
      const categoryIds = query.category === undefined ? undefined : ((await resolveCategoryIds(query.category)) ?? [])
      return filtered.listActive(query, categoryIds)
    },

    /** `GET /categories/{id or slug}/services`: the category and its subcategories. */
    async listCategoryServices(idOrSlug: string, query: ServiceListQuery) {
      if (isCommon(query)) {
        const answer = await common.listCommon(query, idOrSlug)
        if (!answer) throw notFound('Category')
        return answer
      }
      const categoryIds = await resolveCategoryIds(idOrSlug)
      if (!categoryIds) throw notFound('Category')
      return filtered.listActive(query, categoryIds)
    },
  }
}

export type ServiceBrowsing = ReturnType<typeof createServiceBrowsing>
