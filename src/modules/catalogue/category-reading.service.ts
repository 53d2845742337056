import type { Db } from '../../db/client.ts'
import { taggedJson, type TaggedJson } from '../../http/tagged-answer.ts'
import { notFound } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import type { CategoryDetail, CategoryTreeItem } from './categories.service.ts'
import { createCategoriesRepository, type CategoriesRepository } from './categories.repository.ts'
import type { CategoryRow } from './categories.table.ts'
import type { CategoryTree } from './category-tree.cache.ts'

export const toNode = (row: CategoryRow, servicesCount: number) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  description: row.description,
  parentId: row.parentId,
  position: row.position,
  servicesCount,
})

export async function findByIdOrSlug(categories: CategoriesRepository, idOrSlug: string): Promise<CategoryRow | undefined> {
  return isUuid(idOrSlug) ? categories.findById(idOrSlug) : categories.findBySlug(idOrSlug)
}

/** The node, its subcategories and its parent, counted with one grouped query. */
export async function detailOf(categories: CategoriesRepository, row: CategoryRow): Promise<CategoryDetail> {
  const children = row.parentId === null ? await categories.listChildren(row.id) : []
  const parent = row.parentId === null ? undefined : await categories.findById(row.parentId)
  const counts = await categories.countActiveServices([row.id, ...children.map((child) => child.id)])
  const subcategories = children.map((child) => toNode(child, counts.get(child.id) ?? 0))
  const own = counts.get(row.id) ?? 0
  return {
    ...toNode(row, subcategories.reduce((sum, child) => sum + child.servicesCount, own)),
    subcategories,
    parent: parent ? { id: parent.id, name: parent.name, slug: parent.slug } : null,
  }
}

/** The category tree as anyone reads it: the whole tree, and one category. */
export function createCategoryReading(deps: { db: Db; tree: CategoryTree }) {
  const { db, tree } = deps
  return {
    /** Top-level categories with their subcategories, by position then name; counts cover active services. Kept in memory (`CategoryTree`). */
    listCategoryTree: (): Promise<TaggedJson<CategoryTreeItem[]>> => tree.list(),

    /**
     * One category from the kept tree. One it does not know is looked up in the database: found
     * there, the kept tree is older than the category (written around the API), so this instance
     * reloads it; a category the tree cannot hold (a third level written by hand) is answered
     * from the database.
     */
    async getCategory(idOrSlug: string): Promise<TaggedJson<CategoryDetail>> {
      const kept = await tree.find(idOrSlug)
      if (kept) return kept
      const categories = createCategoriesRepository(db)
      const row = await findByIdOrSlug(categories, idOrSlug)
      if (!row) throw notFound('Category')
      tree.dropHere()
      return (await tree.find(idOrSlug)) ?? taggedJson<CategoryDetail>(JSON.stringify(await detailOf(categories, row)))
    },
  }
}
