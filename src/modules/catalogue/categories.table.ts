import { type AnyPgColumn, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'

/** A two-level taxonomy: top-level categories (parentId null) and their subcategories. */
export const categories = pgTable(
  'categories',
  {
    id: uuid('id').primaryKey(),
    parentId: uuid('parent_id').references((): AnyPgColumn => categories.id, { onDelete: 'restrict' }),
    name: text('name').notNull(),
    slug: text('slug').notNull().unique(),
    description: text('description').notNull().default(''),
    position: integer('position').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [index('categories_parent_idx').on(table.parentId, table.position)],
)

export type CategoryRow = typeof categories.$inferSelect

/** The longest slug, and the highest position among siblings. */
export const SLUG_MAX = 60
export const POSITION_MAX = 1000

/**
 * Active, not deleted services per category (its own, not its subcategories'), kept by triggers
 * on `services` (migration `catalogue_counts_custom`) so no read counts services. A category with
 * no row has none.
 */
export const categoryServiceCounts = pgTable('category_service_counts', {
  categoryId: uuid('category_id')
    .primaryKey()
    .references(() => categories.id, { onDelete: 'cascade' }),
  activeServices: integer('active_services').notNull().default(0),
})
