import { and, asc, count, eq, gt, gte, ilike, inArray, isNotNull, isNull, lt, or, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { jsonObjectSql } from '../../db/json-sql.ts'
import { prepared } from '../../db/statements.ts'
import { Identity, UserSummary, type SellerLevel } from './users.schemas.ts'
import { users, type NewUserRow, type UserRow } from './users.table.ts'

/** Every authenticated request reads its user (a suspended account is refused at once): built once, planned once per connection. */
const userById = prepared('users_by_id', (db) => db.select().from(users).where(eq(users.id, sql.placeholder('id'))))

export const userRoles = ['client', 'staff', 'admin'] as const
export const userStatuses = ['active', 'inactive', 'suspended'] as const

export interface UserListFilter {
  search?: string
  isActive?: boolean
  isStaff?: boolean
  /** `client` (neither staff nor superuser), `staff` (staff, not superuser), `admin` (superuser). */
  role?: (typeof userRoles)[number]
  /** `suspended` wins over the active flag: a suspended account is neither active nor inactive. */
  status?: (typeof userStatuses)[number]
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (match) => `\\${match}`)

function whereOf(filter: UserListFilter): SQL | undefined {
  const conditions: SQL[] = []
  if (filter.search) {
    const pattern = `%${escapeLike(filter.search)}%`
    // One expression matching the trigram index users_search_trgm_idx.
    conditions.push(ilike(sql`(${users.email} || ' ' || ${users.username} || ' ' || ${users.fullName})`, pattern))
  }
  if (filter.isActive !== undefined) conditions.push(eq(users.isActive, filter.isActive))
  if (filter.isStaff !== undefined) conditions.push(eq(users.isStaff, filter.isStaff))
  if (filter.role === 'admin') conditions.push(eq(users.isSuperuser, true))
  if (filter.role === 'staff') conditions.push(eq(users.isStaff, true), eq(users.isSuperuser, false))
  if (filter.role === 'client') conditions.push(eq(users.isStaff, false), eq(users.isSuperuser, false))
  if (filter.status === 'suspended') conditions.push(isNotNull(users.suspendedAt))
  if (filter.status === 'active') conditions.push(eq(users.isActive, true), isNull(users.suspendedAt))
  if (filter.status === 'inactive') conditions.push(eq(users.isActive, false), isNull(users.suspendedAt))
  return conditions.length > 0 ? and(...conditions) : undefined
}

export function createUsersRepository(db: Executor) {
  return {
    async findById(id: string): Promise<UserRow | undefined> {
      const [row] = await userById(db, { id })
      return row
    },

    async lockById(id: string): Promise<UserRow | undefined> {
      const [row] = await db.select().from(users).where(eq(users.id, id)).for('update')
      return row
    },

    async findByIds(ids: string[]): Promise<UserRow[]> {
      if (ids.length === 0) return []
      return db.select().from(users).where(inArray(users.id, ids))
    },

    async findByEmail(email: string): Promise<UserRow | undefined> {
      const [row] = await db.select().from(users).where(eq(users.email, email))
      return row
    },

    async findTakenUsernames(candidates: string[]): Promise<Set<string>> {
      if (candidates.length === 0) return new Set()
      const rows = await db.select({ username: users.username }).from(users).where(or(...candidates.map((name) => eq(users.username, name))))
      return new Set(rows.map((row) => row.username))
    },

    async insert(row: NewUserRow): Promise<UserRow> {
      const [inserted] = await db.insert(users).values(row).returning()
      return inserted!
    },

    async update(id: string, patch: Partial<Omit<NewUserRow, 'id' | 'createdAt'>>): Promise<UserRow | undefined> {
      const [row] = await db.update(users).set(patch).where(eq(users.id, id)).returning()
      return row
    },

    /** Whether any superuser exists, active or not. */
    async hasSuperuser(): Promise<boolean> {
      const [row] = await db.select({ id: users.id }).from(users).where(eq(users.isSuperuser, true)).limit(1)
      return row !== undefined
    },

    /** Held until the transaction ends, so instances starting together create one first superuser, not one each. */
    async lockFirstSuperuser(): Promise<void> {
      await db.execute(sql`select pg_advisory_xact_lock(hashtextextended('users:first-superuser', 0))`)
    },

    /** Active superusers, oldest first. */
    async listActiveSuperusers(): Promise<UserRow[]> {
      return db
        .select()
        .from(users)
        .where(and(eq(users.isSuperuser, true), eq(users.isActive, true)))
        .orderBy(asc(users.createdAt), asc(users.id))
    },

    /**
     * The next accounts by id after `afterId`, for the seller level evaluation: what it reads of
     * each. With `evaluatedBefore`, accounts evaluated since then are left out (another worker
     * did them).
     */
    listForLevelEvaluation(afterId: string | null, limit: number, evaluatedBefore?: Date) {
      const conditions = [afterId === null ? undefined : gt(users.id, afterId), evaluatedBefore && or(isNull(users.levelEvaluatedAt), lt(users.levelEvaluatedAt, evaluatedBefore))]
      return db
        .select({ id: users.id, createdAt: users.createdAt, suspendedAt: users.suspendedAt, sellerLevel: users.sellerLevel })
        .from(users)
        .where(and(...conditions))
        .orderBy(asc(users.id))
        .limit(limit)
    },

    /** Records an evaluation of the accounts' levels without changing them (no `updated_at`: the owner changed nothing). */
    async markLevelsEvaluated(ids: string[], at: Date): Promise<void> {
      if (ids.length === 0) return
      await db.update(users).set({ levelEvaluatedAt: at }).where(inArray(users.id, ids))
    },

    async countCreatedSince(since: Date): Promise<number> {
      const [row] = await db.select({ total: count() }).from(users).where(gte(users.createdAt, since))
      return row?.total ?? 0
    },

    async list(filter: UserListFilter, offset: number, limit: number): Promise<{ rows: UserRow[]; total: number }> {
      const where = whereOf(filter)
      const [rows, [totals]] = await Promise.all([
        db.select().from(users).where(where).orderBy(asc(users.createdAt), asc(users.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(users).where(where),
      ])
      return { rows, total: totals?.total ?? 0 }
    },
  }
}

export type UsersRepository = ReturnType<typeof createUsersRepository>

/** Who a user is, as authorisation needs it (`Actor` without the permissions). */
export type IdentityJson = Identity

/** For another module's one-statement reads: the identity of the user in `userId` as JSON (null when unknown). */
export const identityJsonSql = (userId: AnyColumn | SQL) =>
  sql<IdentityJson | null>`(select ${jsonObjectSql(Identity, {
    id: users.id,
    email: users.email,
    fullName: users.fullName,
    isStaff: users.isStaff,
    isSuperuser: users.isSuperuser,
  })} from ${users} where ${users.id} = ${userId})`

/**
 * Whether the user in `userId` may use a session issued at token version `version`: active, not
 * suspended, no password reset or suspension since (auth's `isUsable`, as SQL for statements that
 * check a session and write in one go).
 */
export const usableAccountSql = (userId: AnyColumn | SQL, version: SQL) =>
  sql<boolean>`exists (select 1 from ${users} where ${users.id} = ${userId} and ${users.isActive} and ${users.suspendedAt} is null and ${users.tokenVersion} = ${version})`

/**
 * Whether the account in `userId` can be written to: active and not suspended (false for an
 * unknown user), for statements of other modules that read it with the rest of a write's lookups.
 */
export const availableAccountSql = (userId: AnyColumn | SQL) => sql<boolean>`exists (select 1 from ${users} where ${users.id} = ${userId} and ${users.isActive} and ${users.suspendedAt} is null)`

/** Whether a message can reach the user in `userId`: `accountStandingSql` answers one of these. */
export type AccountStanding = 'available' | 'unavailable' | 'unknown'

/**
 * For another module's one-statement writes: whether the account in `userId` can be written to
 * (`available`), exists but is suspended or deactivated (`unavailable`), or has no public
 * existence (`unknown`: no such user, or one never activated, which is as unknown as a wrong id).
 */
export const accountStandingSql = (userId: AnyColumn | SQL) =>
  sql<AccountStanding>`coalesce((select case when ${users.isActive} and ${users.suspendedAt} is null then 'available'
    when not ${users.isActive} and ${users.activatedAt} is null and ${users.suspendedAt} is null then 'unknown'
    else 'unavailable' end from ${users} where ${users.id} = ${userId}), 'unknown')`

/** Whether the user in `userId` passed seller KYC, as a scalar subquery (false for an unknown user). */
export const kycVerifiedSql = (userId: AnyColumn | SQL) => sql<boolean>`coalesce((select ${users.isKycVerified} from ${users} where ${users.id} = ${userId}), false)`

/** For another module's one-statement reads: the public summary of the user in `userId` (`UserSummary`) as JSON (a column that references a user). */
export const publicSummarySql = (userId: AnyColumn | SQL, avatarOf: (id: AnyColumn) => SQL<string | null>) =>
  sql<UserSummary>`(select ${jsonObjectSql(UserSummary, { id: users.id, fullName: users.fullName, username: users.username, avatar: avatarOf(users.id) })} from ${users} where ${users.id} = ${userId})`

/** For another module's one-statement reads: the seller level of the user in `userId` (a column that references a user). */
export const sellerLevelSql = (userId: AnyColumn | SQL) => sql<SellerLevel>`(select ${users.sellerLevel} from ${users} where ${users.id} = ${userId})`

/**
 * For another module's statements: a select of the ids (`id`) of the users at one of `levels` (a
 * `text[]` expression) above `new`. Only sellers rise above `new`, and few do, so this reads them
 * from the partial index on the level.
 */
export const sellersAboveNewSql = (levels: SQL) =>
  sql`select ${users.id} as id from ${users} where ${users.sellerLevel} = any(${levels}) and ${users.sellerLevel} <> 'new'`

/**
 * For another module's statements: a select of every user above `new`, by `id` with their
 * `level`; anyone not in it is at `new`. The partial index on the level holds these few (sellers
 * who rose), so a statement that needs the level of many rows hashes them once, however many
 * buyers there are, instead of looking each row's user up.
 */
export const levelsAboveNewSql = () => sql`select ${users.id} as id, ${users.sellerLevel} as level from ${users} where ${users.sellerLevel} <> 'new'`

/**
 * For another module's statements: whether the user in `userId` is at one of `levels` (a `text[]`
 * expression). Written against the users above `new` alone, the few the partial index holds: in
 * them when `new` is not asked for, not among those at the other levels when it is. A statement
 * that checks many rows then hashes those few once, where "the users at these levels" would hash
 * every buyer (they are all `new`) or look each row's seller up in the table.
 */
export const atSellerLevelSql = (userId: AnyColumn | SQL, levels: SQL) =>
  sql<boolean>`(case when 'new' = any(${levels})
    then ${userId} not in (select ${users.id} from ${users} where ${users.sellerLevel} <> 'new' and ${users.sellerLevel} <> all(${levels}))
    else ${userId} in (select ${users.id} from ${users} where ${users.sellerLevel} <> 'new' and ${users.sellerLevel} = any(${levels})) end)`
