import type { Static } from '@sinclair/typebox'
import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { placeholdersOf } from '../../db/fragments.ts'
import { jsonObjectSql, JsonText } from '../../db/json-sql.ts'
import { preparedSql } from '../../db/statements.ts'
import { categories } from './categories.table.ts'
import { savedServices } from './saved-services.table.ts'
import { isoSql, moneySql, type ServiceViews } from './service-lists.repository.ts'
import { Service } from './services.schemas.ts'
import { serviceColumns, serviceExtras, servicePackages, services, type ServiceExtraRow, type ServicePackageRow, type ServiceRow, type ServiceStatus } from './services.table.ts'

export {
  COMMON_LIST_ROWS,
  commonListShapes,
  prepareCommonList,
  type CommonListShape,
  type ListedJson,
  type PageWindow,
  type ServiceSort,
  type ServiceViews,
} from './service-lists.repository.ts'
export { filteredListShapes, pageReadingOf, prepareFilteredList, searchReadingOf, type FilteredListShape, type FilteredListValues, type PageReading } from './service-filtered-lists.repository.ts'

export type NewServiceRow = typeof services.$inferInsert

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `GET /services/{id}`'s answer. */
export type ServiceJson = Static<typeof Service>

/**
 * `GET /services/{id}` in one prepared statement: the answer's JSON text, built by PostgreSQL from
 * the response schema (`rejectionReason` null: it depends on the viewer; `saved` for the viewer,
 * false without one), and what decides who may see the service and its rejection reason. Prepared
 * once per database handle: Drizzle builds its SQL once, and on PostgreSQL each connection parses
 * and plans it once (a named statement).
 */
export function prepareServiceRead(db: Executor, views: ServiceViews) {
  const { category, packages, extras, rating } = Service.properties
  const placeholder = placeholdersOf<{ id: string; viewer: string | null }>()
  const answer = jsonObjectSql(Service, {
    id: services.id,
    title: services.title,
    shortDescription: services.shortDescription,
    description: services.description,
    tags: services.tags,
    status: services.status,
    rejectionReason: sql`null`,
    category: jsonObjectSql(category, { id: categories.id, name: categories.name, slug: categories.slug }),
    seller: views.sellerOf(services.sellerId),
    sellerLevel: views.levelOf(services.sellerId),
    packages: sql`coalesce((select json_agg(${jsonObjectSql(packages.items, {
      id: sql`p.id`,
      name: sql`p.name`,
      description: sql`p.description`,
      price: moneySql(sql`p.price_cents`),
      deliveryDays: sql`p.delivery_days`,
      revisions: sql`coalesce(to_json(p.revisions), '"unlimited"'::json)`,
      features: sql`p.features`,
    })} order by p.position) from ${servicePackages} p where p.service_id = ${services.id}), '[]'::json)`,
    extras: sql`coalesce((select json_agg(${jsonObjectSql(extras.items, {
      id: sql`e.id`,
      title: sql`e.title`,
      price: moneySql(sql`e.price_cents`),
      additionalDays: sql`e.additional_days`,
    })} order by e.position) from ${serviceExtras} e where e.service_id = ${services.id}), '[]'::json)`,
    banner: views.bannerOf(services.id),
    images: views.galleryOf(services.id),
    startingPrice: moneySql(sql`${services.startingPriceCents}`),
    rating: jsonObjectSql(rating, { average: services.ratingAverage, count: services.ratingCount }),
    ordersCount: services.ordersCount,
    savedCount: services.savedCount,
    saved: sql`exists (select 1 from ${savedServices} v where v.user_id = ${placeholder('viewer')}::uuid and v.service_id = ${services.id})`,
    createdAt: isoSql(sql`${services.createdAt}`),
    updatedAt: isoSql(sql`${services.updatedAt}`),
  })
  // Rows as the driver gives them (no mapping per column): the timestamp as text.
  const statement = preparedSql<{ id: string; viewer: string | null }, { sellerId: string; status: ServiceStatus; deletedAt: string | null; rejectionReason: string | null; service: string }>(
    'catalogue_service_by_id',
    sql`select ${services.sellerId} as "sellerId", ${services.status} as status, ${services.deletedAt} as "deletedAt",
      ${services.rejectionReason} as "rejectionReason", ${answer}::text as service
      from ${services} join ${categories} on ${categories.id} = ${services.categoryId}
      where ${services.id} = ${placeholder('id')}::uuid`,
  )
  return async (id: string, viewerId: string | null) => {
    const [row] = await statement(db, { id, viewer: viewerId })
    return (
      row && {
        sellerId: row.sellerId,
        status: row.status,
        deletedAt: row.deletedAt === null ? null : new Date(row.deletedAt),
        rejectionReason: row.rejectionReason,
        service: new JsonText<ServiceJson>(row.service),
      }
    )
  }
}

/** A service's own rows: the service, its packages and extras, and the moderation queue. */
function serviceRows(db: Executor) {
  const live = isNull(services.deletedAt)
  return {
    async findById(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db.select(serviceColumns).from(services).where(eq(services.id, id))
      return row
    },

    async lockById(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db.select(serviceColumns).from(services).where(and(eq(services.id, id), live)).for('update')
      return row
    },

    async insert(row: NewServiceRow): Promise<ServiceRow> {
      const [inserted] = await db.insert(services).values(row).returning(serviceColumns)
      return inserted!
    },

    async update(id: string, patch: Partial<Omit<NewServiceRow, 'id' | 'sellerId' | 'createdAt'>>): Promise<ServiceRow | undefined> {
      const [row] = await db.update(services).set(patch).where(eq(services.id, id)).returning(serviceColumns)
      return row
    },

    /** Packages and extras are replaced wholesale: their ids change on every edit. */
    async replacePackages(serviceId: string, rows: (typeof servicePackages.$inferInsert)[]): Promise<void> {
      await db.delete(servicePackages).where(eq(servicePackages.serviceId, serviceId))
      if (rows.length > 0) await db.insert(servicePackages).values(rows)
    },

    async replaceExtras(serviceId: string, rows: (typeof serviceExtras.$inferInsert)[]): Promise<void> {
      await db.delete(serviceExtras).where(eq(serviceExtras.serviceId, serviceId))
      if (rows.length > 0) await db.insert(serviceExtras).values(rows)
    },

    packagesOf(serviceIds: string[]): Promise<ServicePackageRow[]> {
      if (serviceIds.length === 0) return Promise.resolve([])
      return db.select().from(servicePackages).where(inArray(servicePackages.serviceId, serviceIds)).orderBy(asc(servicePackages.position))
    },

    extrasOf(serviceIds: string[]): Promise<ServiceExtraRow[]> {
      if (serviceIds.length === 0) return Promise.resolve([])
      return db.select().from(serviceExtras).where(inArray(serviceExtras.serviceId, serviceIds)).orderBy(asc(serviceExtras.position))
    },

    async listByStatus(status: ServiceStatus, offset: number, limit: number): Promise<{ rows: ServiceRow[]; total: number }> {
      const where = and(eq(services.status, status), live)
      const [rows, [counted]] = await Promise.all([
        db.select(serviceColumns).from(services).where(where).orderBy(asc(services.createdAt), asc(services.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(services).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** Services that are not soft-deleted, per seller, in one grouped query. */
    async countBySellers(sellerIds: string[]): Promise<Map<string, number>> {
      if (sellerIds.length === 0) return new Map()
      const rows = await db
        .select({ sellerId: services.sellerId, total: count() })
        .from(services)
        .where(and(inArray(services.sellerId, sellerIds), live))
        .groupBy(services.sellerId)
      return new Map(rows.map((row) => [row.sellerId, row.total]))
    },
  }
}

// Categories, read for the services' own use cases (this module owns both tables): the category a
// service names.
function categoryReads(db: Executor) {
  return {
    async findCategory(idOrSlug: string) {
      const [row] = await db
        .select({ id: categories.id, name: categories.name, slug: categories.slug })
        .from(categories)
        .where(UUID.test(idOrSlug) ? eq(categories.id, idOrSlug) : eq(categories.slug, idOrSlug))
      return row
    },
  }
}

/** The services' queries: their rows and the categories they name (the public lists are prepared statements of their own). */
export function createServicesRepository(db: Executor) {
  return { ...serviceRows(db), ...categoryReads(db) }
}

export type ServicesRepository = ReturnType<typeof createServicesRepository>
