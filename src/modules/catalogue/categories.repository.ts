import { asc, count, eq, getTableColumns, inArray, isNull, max, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { categories, categoryServiceCounts, type CategoryRow } from './categories.table.ts'
import { services } from './services.table.ts'

export type CategoryFields = Pick<CategoryRow, 'parentId' | 'name' | 'slug' | 'description' | 'position'>

const byPositionThenName = [asc(categories.position), asc(categories.name), asc(categories.id)]

export function createCategoriesRepository(db: Executor) {
  return {

    /** Every category with its own active services (kept counts), in one statement. */
    listAllWithCounts: (): Promise<(CategoryRow & { servicesCount: number })[]> =>
      db
        .select({ ...getTableColumns(categories), servicesCount: sql<number>`coalesce(${categoryServiceCounts.activeServices}, 0)` })
        .from(categories)
        .leftJoin(categoryServiceCounts, eq(categoryServiceCounts.categoryId, categories.id))
        .orderBy(...byPositionThenName),

    listChildren: (parentId: string): Promise<CategoryRow[]> =>
      db.select().from(categories).where(eq(categories.parentId, parentId)).orderBy(...byPositionThenName),

    async findById(id: string): Promise<CategoryRow | undefined> {
      const [row] = await db.select().from(categories).where(eq(categories.id, id))
      return row
    },

    async findBySlug(slug: string): Promise<CategoryRow | undefined> {
      const [row] = await db.select().from(categories).where(eq(categories.slug, slug))
      return row
    },

    /** Locks the rows in id order, so two transactions locking the same pair cannot deadlock. */
    lockByIds: (ids: string[]): Promise<CategoryRow[]> =>
      db.select().from(categories).where(inArray(categories.id, ids)).orderBy(asc(categories.id)).for('update'),

    async countChildren(parentId: string): Promise<number> {
      const [row] = await db.select({ total: count() }).from(categories).where(eq(categories.parentId, parentId))
      return row?.total ?? 0
    },

    /** The highest position among the children of `parentId` (top level when null), or -1. */
    async lastPosition(parentId: string | null): Promise<number> {
      const [row] = await db
        .select({ position: max(categories.position) })
        .from(categories)
        .where(parentId === null ? isNull(categories.parentId) : eq(categories.parentId, parentId))
      return row?.position ?? -1
    },

    /** Active, not deleted services per category, as the triggers keep them; absent means zero. */
    async countActiveServices(categoryIds?: string[]): Promise<Map<string, number>> {
      if (categoryIds?.length === 0) return new Map()
      const rows = await db
        .select({ categoryId: categoryServiceCounts.categoryId, total: categoryServiceCounts.activeServices })
        .from(categoryServiceCounts)
        .where(categoryIds && inArray(categoryServiceCounts.categoryId, categoryIds))
      return new Map(rows.map((row) => [row.categoryId, row.total]))
    },

    /** Whether any service names the category, whatever its status, soft-deleted ones included. */
    async isUsedByServices(categoryId: string): Promise<boolean> {
      const rows = await db.select({ id: services.id }).from(services).where(eq(services.categoryId, categoryId)).limit(1)
      return rows.length > 0
    },

    async insert(row: CategoryRow): Promise<CategoryRow> {
      const [inserted] = await db.insert(categories).values(row).returning()
      return inserted!
    },

    async update(id: string, patch: Partial<CategoryFields> & Pick<CategoryRow, 'updatedAt'>): Promise<CategoryRow | undefined> {
      const [row] = await db.update(categories).set(patch).where(eq(categories.id, id)).returning()
      return row
    },

    async delete(id: string): Promise<boolean> {
      const deleted = await db.delete(categories).where(eq(categories.id, id)).returning({ id: categories.id })
      return deleted.length > 0
    },
  }
}

export type CategoriesRepository = ReturnType<typeof createCategoriesRepository>
