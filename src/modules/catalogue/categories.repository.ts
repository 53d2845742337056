import type { Static } from '@sinclair/typebox'
import { asc, count, eq, inArray, isNull, max, sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { JsonText, jsonObjectSql } from '../../db/json-sql.ts'
import { preparedSql } from '../../db/statements.ts'
import { CategoryNode, CategoryTreeItem } from './categories.schemas.ts'
import { categories, categoryServiceCounts, type CategoryRow } from './categories.table.ts'
import { services } from './services.table.ts'

/**
 * `GET /categories` in one prepared statement: the top-level categories by position then name,
 * each with its subcategories and the active services of the category and its subcategories,
 * from the kept counts, built as the answer's JSON text by PostgreSQL from the response schema.
 * The list changes a few times a day and is read on most pages, so it costs one cached plan and
 * one row.
 */
const categoryTree = preparedSql<Record<string, never>, { tree: string }>(
  'catalogue_category_tree',
  sql`select coalesce(json_agg(node order by position, name, id), '[]'::json)::text as tree from (
    select p.position, p.name, p.id, ${jsonObjectSql(CategoryTreeItem, {
      id: sql`p.id`,
      name: sql`p.name`,
      slug: sql`p.slug`,
      description: sql`p.description`,
      parentId: sql`null`,
      position: sql`p.position`,
      servicesCount: sql`coalesce(pc.active_services, 0) + coalesce((select sum(cc.active_services) from ${categories} ch join ${categoryServiceCounts} cc on cc.category_id = ch.id where ch.parent_id = p.id), 0)::int`,
      subcategories: sql`coalesce((select json_agg(${jsonObjectSql(CategoryNode, {
        id: sql`ch.id`,
        name: sql`ch.name`,
        slug: sql`ch.slug`,
        description: sql`ch.description`,
        parentId: sql`ch.parent_id`,
        position: sql`ch.position`,
        servicesCount: sql`coalesce(cc.active_services, 0)`,
      })} order by ch.position, ch.name, ch.id)
        from ${categories} ch left join ${categoryServiceCounts} cc on cc.category_id = ch.id where ch.parent_id = p.id), '[]'::json)`,
    })} as node
    from ${categories} p left join ${categoryServiceCounts} pc on pc.category_id = p.id where p.parent_id is null) as tree`,
)

export type CategoryFields = Pick<CategoryRow, 'parentId' | 'name' | 'slug' | 'description' | 'position'>

const byPositionThenName = [asc(categories.position), asc(categories.name), asc(categories.id)]

export function createCategoriesRepository(db: Executor) {
  return {

    /** The two-level tree with counts (`categoryTree`). */
    tree: async () => new JsonText<Static<typeof CategoryTreeItem>[]>((await categoryTree(db, {}))[0]?.tree ?? '[]'),

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
