import { sql } from 'drizzle-orm'
import { index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'

export const uploadObjectTypes = ['user', 'service', 'order', 'identity', 'chat'] as const
export type UploadObjectType = (typeof uploadObjectTypes)[number]

export const uploadTags = ['avatar', 'service_banner', 'service_gallery', 'id_document', 'business_document', 'order_delivery', 'chat_attachment'] as const
export type UploadTag = (typeof uploadTags)[number]

/**
 * A stored file (decision 0010). Unattached uploads (no object yet) live under `tmp/<owner>/` and are
 * purged after 24 h. `path` is the public address; `storageKey` is where the bytes are right now,
 * which differs from `path` only while a move after binding is pending.
 */
export const uploads = pgTable(
  'uploads',
  {
    id: uuid('id').primaryKey(),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    objectType: text('object_type', { enum: uploadObjectTypes }),
    objectId: uuid('object_id'),
    tag: text('tag', { enum: uploadTags }),
    path: text('path').notNull().unique(),
    storageKey: text('storage_key').notNull(),
    filename: text('filename').notNull(),
    mimetype: text('mimetype').notNull(),
    size: integer('size').notNull(),
    order: integer('order').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    // Ends with created_at because an object's files are read in (order, created_at) order, most
    // often for the first one only (an avatar, a banner): the index hands that row over unsorted.
    index('uploads_object_idx').on(table.objectType, table.objectId, table.tag, table.order, table.createdAt),
    index('uploads_owner_idx').on(table.ownerId),
    index('uploads_unattached_idx').on(table.createdAt).where(sql`${table.objectId} is null`),
  ],
)

export type UploadRow = typeof uploads.$inferSelect
