import { and, count, desc, eq, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { afterDescending } from '../../db/keyset.ts'
import { notifications, notificationSettings, type NotificationRow } from './notifications.table.ts'

/** Where a page starts: after this notification (newest first), or after skipping `offset` of them. */
export interface NotificationPosition {
  after?: { createdAt: Date; id: string }
  offset: number
}

export function createNotificationsRepository(db: Executor) {
  const ofUser = (userId: string, unreadOnly: boolean): SQL | undefined => and(eq(notifications.userId, userId), unreadOnly ? isNull(notifications.readAt) : undefined)

  return {
    async insert(row: NotificationRow): Promise<NotificationRow> {
      const [inserted] = await db.insert(notifications).values(row).returning()
      return inserted!
    },

    async findById(id: string): Promise<NotificationRow | undefined> {
      const [row] = await db.select().from(notifications).where(eq(notifications.id, id))
      return row
    },

    /** A person's notifications, newest first, after a cursor or from an offset. */
    list(userId: string, unreadOnly: boolean, position: NotificationPosition, limit: number): Promise<NotificationRow[]> {
      const after = position.after
        ? afterDescending(notifications.createdAt, position.after.createdAt, notifications.id, position.after.id)
        : undefined
      return db
        .select()
        .from(notifications)
        .where(and(ofUser(userId, unreadOnly), after))
        .orderBy(desc(notifications.createdAt), desc(notifications.id))
        .offset(position.after ? 0 : position.offset)
        .limit(limit)
    },

    async count(userId: string, unreadOnly: boolean): Promise<number> {
      const [row] = await db.select({ total: count() }).from(notifications).where(ofUser(userId, unreadOnly))
      return row?.total ?? 0
    },

    /** Which of these ids are the person's. */
    async ownedIds(userId: string, ids: string[]): Promise<string[]> {
      const rows = await db
        .select({ id: notifications.id })
        .from(notifications)
        .where(and(eq(notifications.userId, userId), inArray(notifications.id, ids)))
      return rows.map((row) => row.id)
    },

    /** Marks the person's unread notifications read (these ids, or all of them); answers how many changed. */
    async markRead(userId: string, ids: string[] | 'all', at: Date): Promise<number> {
      const rows = await db
        .update(notifications)
        .set({ readAt: at })
        .where(and(ofUser(userId, true), ids === 'all' ? undefined : inArray(notifications.id, ids)))
        .returning({ id: notifications.id })
      return rows.length
    },

    /** Deletes up to `limit` notifications created before `cutoff`; SKIP LOCKED lets several workers sweep side by side. */
    async deleteCreatedBefore(cutoff: Date, limit: number): Promise<number> {
      const batch = db.select({ id: notifications.id }).from(notifications).where(lt(notifications.createdAt, cutoff)).limit(limit).for('update', { skipLocked: true })
      const deleted = await db
        .delete(notifications)
        .where(sql`${notifications.id} in ${batch}`)
        .returning({ id: notifications.id })
      return deleted.length
    },

    /** The kinds the person switched on or off by e-mail (only those they chose). */
    async emailChoices(userId: string): Promise<Record<string, boolean>> {
      const [row] = await db.select({ email: notificationSettings.email }).from(notificationSettings).where(eq(notificationSettings.userId, userId))
      return row?.email ?? {}
    },

    /** Merges these choices into the person's, under the row's lock (concurrent changes of other kinds are kept). */
    async mergeEmailChoices(userId: string, changes: Record<string, boolean>, at: Date): Promise<Record<string, boolean>> {
      const [row] = await db
        .insert(notificationSettings)
        .values({ userId, email: changes, updatedAt: at })
        .onConflictDoUpdate({ target: notificationSettings.userId, set: { email: sql`${notificationSettings.email} || excluded.email`, updatedAt: at } })
        .returning({ email: notificationSettings.email })
      return row!.email
    },
  }
}
