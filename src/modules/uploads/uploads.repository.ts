import { and, asc, eq, inArray, isNull, lt, or, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { jsonObjectSql } from '../../db/json-sql.ts'
import { PublicFile } from './uploads.schemas.ts'
import { uploads, type UploadObjectType, type UploadRow, type UploadTag } from './uploads.table.ts'

export function createUploadsRepository(db: Executor) {
  return {
    async insert(row: UploadRow): Promise<UploadRow> {
      const [inserted] = await db.insert(uploads).values(row).returning()
      return inserted!
    },

    /** Serialises changes to one object's slot (e.g. a user's avatar) until the transaction ends. */
    async lockSlot(objectType: UploadObjectType, objectId: string, tag: UploadTag): Promise<void> {
      await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`uploads:${objectType}/${objectId}/${tag}`}, 0))`)
    },

    async findById(id: string): Promise<UploadRow | undefined> {
      const [row] = await db.select().from(uploads).where(eq(uploads.id, id))
      return row
    },

    listByIds(ids: string[]): Promise<UploadRow[]> {
      if (ids.length === 0) return Promise.resolve([])
      return db.select().from(uploads).where(inArray(uploads.id, ids))
    },

    async findByPath(path: string): Promise<UploadRow | undefined> {
      const [row] = await db.select().from(uploads).where(eq(uploads.path, path))
      return row
    },

    async lockById(id: string): Promise<UploadRow | undefined> {
      const [row] = await db.select().from(uploads).where(eq(uploads.id, id)).for('update')
      return row
    },

    listByObject(objectType: UploadObjectType, objectIds: string[], tag: UploadTag): Promise<UploadRow[]> {
      if (objectIds.length === 0) return Promise.resolve([])
      return db
        .select()
        .from(uploads)
        .where(and(eq(uploads.objectType, objectType), inArray(uploads.objectId, objectIds), eq(uploads.tag, tag)))
        .orderBy(asc(uploads.order), asc(uploads.createdAt))
    },

    async update(id: string, patch: Partial<Omit<UploadRow, 'id'>>): Promise<UploadRow | undefined> {
      const [row] = await db.update(uploads).set(patch).where(eq(uploads.id, id)).returning()
      return row
    },

    /** Records that bytes moved, unless the row changed meanwhile. */
    async updateStorageKey(id: string, from: string, to: string): Promise<boolean> {
      const rows = await db
        .update(uploads)
        .set({ storageKey: to })
        .where(and(eq(uploads.id, id), eq(uploads.storageKey, from)))
        .returning({ id: uploads.id })
      return rows.length > 0
    },

    /** Whether any row keeps its bytes at this key, or will once a pending move runs. */
    async isReferenced(key: string): Promise<boolean> {
      const [row] = await db
        .select({ id: uploads.id })
        .from(uploads)
        .where(or(eq(uploads.storageKey, key), eq(uploads.path, key)))
        .limit(1)
      return row !== undefined
    },

    async deleteByIds(ids: string[]): Promise<UploadRow[]> {
      if (ids.length === 0) return []
      return db.delete(uploads).where(inArray(uploads.id, ids)).returning()
    },

    /** Deletes one file if it is still in that object's slot. */
    async deleteFromSlot(id: string, objectType: UploadObjectType, objectId: string, tag: UploadTag): Promise<UploadRow | undefined> {
      const [row] = await db
        .delete(uploads)
        .where(and(eq(uploads.id, id), eq(uploads.objectType, objectType), eq(uploads.objectId, objectId), eq(uploads.tag, tag)))
        .returning()
      return row
    },

    async deleteUnattached(ids: string[]): Promise<UploadRow[]> {
      if (ids.length === 0) return []
      return db.delete(uploads).where(and(inArray(uploads.id, ids), isNull(uploads.objectId))).returning()
    },

    listUnattachedBefore(cutoff: Date, limit: number): Promise<UploadRow[]> {
      return db
        .select()
        .from(uploads)
        .where(and(isNull(uploads.objectId), lt(uploads.createdAt, cutoff)))
        .orderBy(asc(uploads.createdAt))
        .limit(limit)
    },
  }
}

// Public files' URLs built by PostgreSQL (`<filesBaseUrl>/<path>`, as `urlOf` builds them), for
// other modules' one-statement reads; in the order `listByObject` gives.
const ofObject = (objectType: UploadObjectType, objectId: AnyColumn | SQL, tag: UploadTag) =>
  sql`${uploads.objectType} = ${objectType} and ${uploads.objectId} = ${objectId} and ${uploads.tag} = ${tag}`
const urlSql = (filesBaseUrl: string) => sql`${`${filesBaseUrl}/`}::text || ${uploads.path}`

export const publicFileUrlSql = (filesBaseUrl: string, objectType: UploadObjectType, objectId: AnyColumn | SQL, tag: UploadTag) =>
  sql<string | null>`(select ${urlSql(filesBaseUrl)} from ${uploads} where ${ofObject(objectType, objectId, tag)} order by ${uploads.order}, ${uploads.createdAt} limit 1)`

export const publicFilesJsonSql = (filesBaseUrl: string, objectType: UploadObjectType, objectId: AnyColumn | SQL, tag: UploadTag) =>
  sql<PublicFile[]>`coalesce((select json_agg(${jsonObjectSql(PublicFile, { id: uploads.id, url: urlSql(filesBaseUrl), order: uploads.order })} order by ${uploads.order}, ${uploads.createdAt}) from ${uploads} where ${ofObject(objectType, objectId, tag)}), '[]'::json)`
