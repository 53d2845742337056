import { and, asc, count, desc, eq, gte, inArray, isNull, lte, or, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { categories } from './categories.table.ts'
import { serviceExtras, servicePackages, services, type ServiceExtraRow, type ServicePackageRow, type ServiceRow, type ServiceStatus } from './services.table.ts'

export type NewServiceRow = typeof services.$inferInsert
export type ServiceSort = 'price' | 'rating' | 'createdAt' | 'relevance'

export interface ServiceSearch {
  categoryIds?: string[]
  search?: string
  minPriceCents?: number
  maxPriceCents?: number
  sellerId?: string
  tags?: string[]
  sortBy: ServiceSort
  sortOrder: 'asc' | 'desc'
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function createServicesRepository(db: Executor) {
  const live = isNull(services.deletedAt)

  /** Full text on the generated vector, or a title that looks like the words (typos: pg_trgm). */
  function searchTerms(search: string) {
    const query = sql`websearch_to_tsquery('english', ${search})`
    const words = sql`lower(${search})`
    return {
      // Trigram operators served by services_title_trgm_idx: `<%` finds the words inside a longer
      // title (one typo per word), `%` a query that is most of the title with several typos.
      matches: or(sql`${services.searchVector} @@ ${query}`, sql`${words} <% lower(${services.title})`, sql`lower(${services.title}) % ${words}`)!,
      rank: sql<number>`ts_rank(${services.searchVector}, ${query}) + word_similarity(${words}, lower(${services.title}))`,
    }
  }

  return {
    async findById(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db.select().from(services).where(eq(services.id, id))
      return row
    },

    async lockById(id: string): Promise<ServiceRow | undefined> {
      const [row] = await db.select().from(services).where(and(eq(services.id, id), live)).for('update')
      return row
    },

    async insert(row: NewServiceRow): Promise<ServiceRow> {
      const [inserted] = await db.insert(services).values(row).returning()
      return inserted!
    },

    async update(id: string, patch: Partial<Omit<NewServiceRow, 'id' | 'sellerId' | 'createdAt'>>): Promise<ServiceRow | undefined> {
      const [row] = await db.update(services).set(patch).where(eq(services.id, id)).returning()
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
        db.select().from(services).where(where).orderBy(asc(services.createdAt), asc(services.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(services).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    /** The public catalogue: active, not deleted, filtered and sorted on indexed columns. */
    async searchActive(filter: ServiceSearch, offset: number, limit: number): Promise<{ rows: ServiceRow[]; total: number }> {
      const conditions: SQL[] = [eq(services.status, 'active'), live]
      if (filter.categoryIds) conditions.push(inArray(services.categoryId, filter.categoryIds))
      if (filter.minPriceCents !== undefined) conditions.push(gte(services.startingPriceCents, filter.minPriceCents))
      if (filter.maxPriceCents !== undefined) conditions.push(lte(services.startingPriceCents, filter.maxPriceCents))
      if (filter.sellerId) conditions.push(eq(services.sellerId, filter.sellerId))
      if (filter.tags && filter.tags.length > 0) conditions.push(sql`${services.tags} && ${sql`array[${sql.join(filter.tags.map((tag) => sql`${tag}`), sql`, `)}]::text[]`}`)
      const terms = filter.search !== undefined ? searchTerms(filter.search) : undefined
      if (terms) conditions.push(terms.matches)
      const where = and(...conditions)

      const direction = filter.sortOrder === 'asc' ? asc : desc
      const sortColumn: Record<ServiceSort, SQL | typeof services.startingPriceCents> = {
        price: sql`${services.startingPriceCents}`,
        rating: sql`${services.ratingAverage}`,
        createdAt: sql`${services.createdAt}`,
        relevance: terms?.rank ?? sql`${services.createdAt}`,
      }
      const [rows, [counted]] = await Promise.all([
        db
          .select()
          .from(services)
          .where(where)
          // The id (UUIDv7) breaks ties so pages never overlap.
          .orderBy(direction(sortColumn[filter.sortBy]), direction(services.id))
          .offset(offset)
          .limit(limit),
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

    // Categories: read here only until the categories service (another subject of this module)
    // exposes resolveCategory and categoryIdsWithin; then these three go.
    async findCategory(idOrSlug: string) {
      const [row] = await db
        .select({ id: categories.id, name: categories.name, slug: categories.slug })
        .from(categories)
        .where(UUID.test(idOrSlug) ? eq(categories.id, idOrSlug) : eq(categories.slug, idOrSlug))
      return row
    },

    /** A category and its subcategories (the taxonomy has two levels). */
    async categoryIdsWithin(categoryId: string): Promise<string[]> {
      const rows = await db.select({ id: categories.id }).from(categories).where(or(eq(categories.id, categoryId), eq(categories.parentId, categoryId)))
      return rows.map((row) => row.id)
    },

    categoriesByIds(ids: string[]) {
      if (ids.length === 0) return Promise.resolve([])
      return db.select({ id: categories.id, name: categories.name, slug: categories.slug }).from(categories).where(inArray(categories.id, ids))
    },

  }
}

export type ServicesRepository = ReturnType<typeof createServicesRepository>
