import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import { uniqueAsFieldError } from '../../db/errors.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import type { Clock } from '../../lib/clock.ts'
import { isUuid, newId } from '../../lib/ids.ts'
import type { AuditService } from '../audit/audit.module.ts'
import { categoryInUse } from './catalogue.errors.ts'
import type { CategoryTree } from './category-tree.cache.ts'
import { createCategoryReading, detailOf, findByIdOrSlug, type toNode } from './category-reading.service.ts'
import { createCategoriesRepository, type CategoriesRepository } from './categories.repository.ts'
import { POSITION_MAX, SLUG_MAX, type CategoryRow } from './categories.table.ts'

export interface CategoryInput {
  name: string
  slug?: string
  description?: string
  parentId?: string | null
  position?: number
}

export type CategorySummary = Pick<CategoryRow, 'id' | 'name' | 'slug' | 'parentId'>

export type CategoryNode = ReturnType<typeof toNode>
export type CategoryTreeItem = CategoryNode & { subcategories: CategoryNode[] }
export type CategoryDetail = CategoryTreeItem & { parent: Pick<CategorySummary, 'id' | 'name' | 'slug'> | null }

/** `Graphics & Design` -> `graphics-design`: ASCII letters and digits joined by single hyphens. */
export function slugFrom(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, SLUG_MAX)
    .replace(/^-+|-+$/g, '')
}

const FOREIGN_KEY_VIOLATION = '23503'
const foreignKeyViolation = (error: unknown): boolean => {
  const cause = (error as { cause?: { code?: string } }).cause ?? error
  return (cause as { code?: string } | undefined)?.code === FOREIGN_KEY_VIOLATION
}

/** What an audit row says of a category. */
const categoryState = (row: CategoryRow) => ({ name: row.name, slug: row.slug, parentId: row.parentId, position: row.position })

/** Runs a write of the tree, then has every instance drop the tree it keeps. */
async function changing<T>(tree: Pick<CategoryTree, 'changed'>, write: () => Promise<T>): Promise<T> {
  const result = await write()
  await tree.changed()
  return result
}

const SLUG_TAKEN = 'is already used by another category'
const FALLBACK_SLUG = 'category'
const IN_USE_BY_SERVICES = 'services use it (including paused, rejected or deleted ones); move them first'

/** Two concurrent requests can both pass the slug check; the unique index decides. */
const slugRace = <T>(work: () => Promise<T>) => uniqueAsFieldError('categories_slug_unique', 'slug', SLUG_TAKEN, work)

// A UUID-shaped slug would be unreachable: the lookup reads such a value as an id.
function assertSlugShape(slug: string): void {
  if (isUuid(slug)) throw fieldError('slug', 'must not have the shape of an id')
}

async function assertSlugFree(categories: CategoriesRepository, slug: string, exceptId?: string): Promise<void> {
  assertSlugShape(slug)
  const existing = await categories.findBySlug(slug)
  if (existing && existing.id !== exceptId) throw fieldError('slug', SLUG_TAKEN)
}

/**
 * The name's slug, or the first free `slug-2`, `slug-3`, ... when it is taken. A name with no
 * Latin letter or digit (`日本語`) gets `category`: any name the schema accepts makes a slug.
 */
async function freeSlugFor(categories: CategoriesRepository, name: string): Promise<string> {
  const base = slugFrom(name) || FALLBACK_SLUG
  assertSlugShape(base)
  for (let attempt = 1; attempt <= 100; attempt++) {
    const suffix = attempt === 1 ? '' : `-${attempt}`
    const candidate = `${base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '')}${suffix}`
    if (!(await categories.findBySlug(candidate))) return candidate
  }
  throw fieldError('slug', 'cannot be made from this name; send a slug')
}

/** The slug sent, once it is free, or a free one made from the name. */
async function newSlugFor(categories: CategoriesRepository, input: CategoryInput): Promise<string> {
  if (input.slug === undefined) return freeSlugFor(categories, input.name)
  await assertSlugFree(categories, input.slug)
  return input.slug
}

/** Two levels only: a parent must be an existing top-level category (its row is locked by the caller). */
function assertTopLevelParent(parent: CategoryRow | undefined): CategoryRow {
  if (!parent) throw fieldError('parentId', 'names a category that does not exist')
  if (parent.parentId !== null) throw fieldError('parentId', 'must be a top-level category: categories have two levels only')
  return parent
}

/** The category tree: anyone reads it; a superuser edits it, on record. */
export function createCategoriesService(deps: { db: Db; clock: Clock; audit: Pick<AuditService, 'record'>; tree: CategoryTree }) {
  const { db, clock, audit, tree } = deps

  return {
    ...createCategoryReading(deps),

    /** Superuser actions on the tree are on record, in their transactions. */
    createCategory: (actor: Actor, input: CategoryInput): Promise<CategoryDetail> =>
      changing(tree, () => slugRace(() =>
        db.transaction(async (tx) => {
          const categories = createCategoriesRepository(tx)
          const parentId = input.parentId ?? null
          // The parent's lock keeps it top-level until this child is committed.
          if (parentId !== null) assertTopLevelParent((await categories.lockByIds([parentId]))[0])
          const slug = await newSlugFor(categories, input)
          const position = input.position ?? Math.min((await categories.lastPosition(parentId)) + 1, POSITION_MAX)
          const now = clock.now()
          const row = await categories.insert({
            id: newId(),
            parentId,
            name: input.name,
            slug,
            description: input.description ?? '',
            position,
            createdAt: now,
            updatedAt: now,
          })
          await audit.record(tx, { action: 'category.create', actor, targetType: 'category', targetId: row.id, after: categoryState(row) })
          return detailOf(categories, row)
        }),
      )),

    /** Partial update; the slug stays as it is when only the name changes, so links keep working. */
    updateCategory: (actor: Actor, idOrSlug: string, input: Partial<CategoryInput>): Promise<CategoryDetail> =>
      changing(tree, () => slugRace(() =>
        db.transaction(async (tx) => {
          const categories = createCategoriesRepository(tx)
          const id = (await findByIdOrSlug(categories, idOrSlug))?.id
          if (!id) throw notFound('Category')
          const newParentId = input.parentId ?? null
          const locked = await categories.lockByIds(newParentId === null || newParentId === id ? [id] : [id, newParentId])
          const row = locked.find((candidate) => candidate.id === id)
          if (!row) throw notFound('Category')
          if (input.parentId !== undefined && input.parentId !== row.parentId && newParentId !== null) {
            if (newParentId === id) throw fieldError('parentId', 'cannot be the category itself')
            assertTopLevelParent(locked.find((candidate) => candidate.id === newParentId))
            if ((await categories.countChildren(id)) > 0) throw fieldError('parentId', 'a category with subcategories cannot become a subcategory')
          }
          if (input.slug !== undefined) await assertSlugFree(categories, input.slug, id)
          const updated = await categories.update(id, {
            ...(input.name !== undefined && { name: input.name }),
            ...(input.slug !== undefined && { slug: input.slug }),
            ...(input.description !== undefined && { description: input.description }),
            ...(input.parentId !== undefined && { parentId: input.parentId }),
            ...(input.position !== undefined && { position: input.position }),
            updatedAt: clock.now(),
          })
          await audit.record(tx, { action: 'category.update', actor, targetType: 'category', targetId: id, before: categoryState(row), after: categoryState(updated!) })
          return detailOf(categories, updated!)
        }),
      )),

    /** Refused while subcategories or any service (whatever its status, even deleted) refer to it. */
    async deleteCategory(actor: Actor, idOrSlug: string): Promise<void> {
      try {
        await db.transaction(async (tx) => {
          const categories = createCategoriesRepository(tx)
          const id = (await findByIdOrSlug(categories, idOrSlug))?.id
          const [row] = id ? await categories.lockByIds([id]) : []
          if (!row) throw notFound('Category')
          if ((await categories.countChildren(row.id)) > 0) throw categoryInUse('it has subcategories; delete or move them first')
          if (await categories.isUsedByServices(row.id)) throw categoryInUse(IN_USE_BY_SERVICES)
          await categories.delete(row.id)
          await audit.record(tx, { action: 'category.delete', actor, targetType: 'category', targetId: row.id, before: categoryState(row) })
        })
      } catch (error) {
        // A service or subcategory committed between the checks and the delete: the foreign key decides.
        if (foreignKeyViolation(error)) throw categoryInUse('a service or subcategory now refers to it')
        throw error
      }
      await tree.changed()
    },
  }
}

export type CategoriesService = ReturnType<typeof createCategoriesService>
