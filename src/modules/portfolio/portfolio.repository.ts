import { and, asc, count, desc, eq, getTableName, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { education, experiences, projects, skills, type PortfolioTable } from './portfolio.table.ts'

interface OwnedColumns {
  id: string
  userId: string
  createdAt: Date
  updatedAt: Date
}

/** What a client sets on a record: everything but identity, owner and timestamps. */
export type FieldsOf<T extends PortfolioTable> = Omit<T['$inferInsert'], keyof OwnedColumns>

/** The data verbs of one kind of record; every query is scoped to the owner. */
export interface OwnedRecords<Row, Fields> {
  listByUser(userId: string): Promise<Row[]>
  countByUser(userId: string): Promise<number>
  lockOwned(id: string, userId: string): Promise<Row | undefined>
  lockOwner(userId: string): Promise<void>
  insert(row: Fields & OwnedColumns): Promise<Row>
  update(id: string, userId: string, patch: Partial<Fields> & Pick<OwnedColumns, 'updatedAt'>): Promise<Row | undefined>
  delete(id: string, userId: string): Promise<boolean>
}

/**
 * Drizzle cannot resolve its builder types for a generic table, so the queries run on the union of
 * the four tables and their results are narrowed back to `T`'s rows behind exact signatures.
 */
function ownedRecords<T extends PortfolioTable>(db: Executor, table: T, orderBy: SQL[]): OwnedRecords<T['$inferSelect'], FieldsOf<T>> {
  type Row = T['$inferSelect']
  const anyTable: PortfolioTable = table
  const owned = (id: string, userId: string) => and(eq(anyTable.id, id), eq(anyTable.userId, userId))

  return {
    async listByUser(userId) {
      const rows = await db.select().from(anyTable).where(eq(anyTable.userId, userId)).orderBy(...orderBy)
      return rows
    },

    async countByUser(userId) {
      const [row] = await db.select({ total: count() }).from(anyTable).where(eq(anyTable.userId, userId))
      return row?.total ?? 0
    },

    async lockOwned(id, userId) {
      const [row] = await db.select().from(anyTable).where(owned(id, userId)).for('update')
      return row
    },

    /**
     * Serialises writers of one user's records of this kind until the transaction ends, so two
     * concurrent inserts cannot both pass the count check (a row lock cannot cover rows not yet there).
     */
    async lockOwner(userId) {
      await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${getTableName(anyTable)}:${userId}`}, 0))`)
    },

    async insert(row) {
      const [inserted] = await db.insert(anyTable).values(row as PortfolioTable['$inferInsert']).returning()
      return inserted as Row
    },

    async update(id, userId, patch) {
      const [row] = await db.update(anyTable).set(patch as Partial<PortfolioTable['$inferInsert']>).where(owned(id, userId)).returning()
      return row
    },

    async delete(id, userId) {
      const deleted = await db.delete(anyTable).where(owned(id, userId)).returning({ id: anyTable.id })
      return deleted.length > 0
    },
  }
}

// Skills by name ignoring case, compared by code point so the order is the same whatever the
// database's collation; dated records newest first. The id (UUIDv7) breaks ties in insertion order.
const byName = [asc(sql`lower(${skills.name}) collate "C"`), asc(skills.createdAt), asc(skills.id)]
const byStart = (table: typeof projects | typeof experiences | typeof education) => [desc(table.startDate), asc(table.createdAt), asc(table.id)]

export function createPortfolioRepository(db: Executor) {
  return {
    skills: ownedRecords(db, skills, byName),
    projects: ownedRecords(db, projects, byStart(projects)),
    experiences: ownedRecords(db, experiences, byStart(experiences)),
    education: ownedRecords(db, education, byStart(education)),
  }
}

export type PortfolioRepository = ReturnType<typeof createPortfolioRepository>
