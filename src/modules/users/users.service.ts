import { randomInt } from 'node:crypto'
import type { Db, Executor, Tx } from '../../db/client.ts'
import { uniqueViolation } from '../../db/errors.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { defineStats, readCounters } from '../../platform/statistics/statistics.ts'
import { UsersStats, type UserSummary } from './users.schemas.ts'
import { newId } from '../../lib/ids.ts'
import { toUsernameBase } from '../../lib/text.ts'
import { fieldError, notFound, validationError, type FieldError } from '../../lib/errors.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { PortfolioService } from '../portfolio/portfolio.module.ts'
import { roleOf, type Actor, type Permission } from '../../access/access.ts'
import type { AnyColumn, SQL } from 'drizzle-orm'
import { availableAccountSql, createUsersRepository, identityJsonSql, kycVerifiedSql, publicSummarySql, usableAccountSql, type UserListFilter } from './users.repository.ts'
import type { UserRow } from './users.table.ts'

export interface NewAccount {
  email: string
  fullName: string
  username?: string
  passwordHash: string
  isActive?: boolean
  isStaff?: boolean
  isSuperuser?: boolean
}

export interface ProfileChanges {
  /** An unattached upload id to become the avatar, or null to remove it. */
  avatar?: string | null
  fullName?: string
  username?: string
  title?: string | null
  description?: string | null
  phone?: string | null
}

/** An account row as other modules receive it (they never import the users table). */
export type Account = UserRow

/** `suspended` while staff have suspended the account, else `active` or `inactive`. */
export const statusOf = (row: Pick<UserRow, 'isActive' | 'suspendedAt'>): 'active' | 'inactive' | 'suspended' =>
  row.suspendedAt ? 'suspended' : row.isActive ? 'active' : 'inactive'

/** The account as its owner and staff see it. Private columns (hash, notes) are never copied. */
export function toUser(row: UserRow, avatar: string | null = null) {
  return {
    id: row.id,
    email: row.email,
    fullName: row.fullName,
    username: row.username,
    title: row.title,
    description: row.description,
    phone: row.phone,
    avatar,
    isActive: row.isActive,
    isStaff: row.isStaff,
    isSuperuser: row.isSuperuser,
    isKYCVerified: row.isKycVerified,
    role: roleOf(row),
    status: statusOf(row),
    lastLogin: row.lastLogin?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}
export type User = ReturnType<typeof toUser>

const UNIQUE_FIELDS: Record<string, string> = { users_email_unique: 'email', users_username_unique: 'username' }

/** Maps a unique-constraint race on users to the field it concerns. */
const uniqueViolationField = (error: unknown): string | undefined => UNIQUE_FIELDS[uniqueViolation(error) ?? '']

type AvatarUploads = Pick<UploadsService, 'filesOf' | 'urlOf' | 'bindUpload' | 'clearSlot' | 'attachFile' | 'publicFileUrlSql'>

const avatarSlot = (userId: string) => ({ objectType: 'user', objectId: userId, tag: 'avatar' }) as const

/** The public profile's statistics (decision 0034). */
export interface PublicStats {
  servicesCount: number
  completedOrdersCount: number
  averageRating: number
  reviewsCount: number
}

/** The public profile's statistics, provided by the module that keeps them (reviews). */
export type PublicStatsProvider = (executor: Executor, userId: string) => Promise<PublicStats>

const NO_STATS: PublicStats = { servicesCount: 0, completedOrdersCount: 0, averageRating: 0, reviewsCount: 0 }

export function createUsersService(deps: { db: Db; clock: Clock; uploads: AvatarUploads; portfolio: Pick<PortfolioService, 'portfolioOf'> }) {
  const { db, clock, uploads, portfolio } = deps
  let publicStats: PublicStatsProvider = async () => NO_STATS

  /** Avatar URLs of many users in one query (lists must not query per user). */
  async function avatarsOf(executor: Executor, userIds: string[]): Promise<Map<string, string>> {
    const rows = await uploads.filesOf(executor, 'user', userIds, 'avatar')
    return new Map(rows.map((row) => [row.objectId!, uploads.urlOf(row)]))
  }

  /** The account as its owner sees it, with its avatar. */
  const describe = async (executor: Executor, row: UserRow): Promise<User> => toUser(row, (await avatarsOf(executor, [row.id])).get(row.id) ?? null)

  async function generateUsername(tx: Tx, fullName: string): Promise<string> {
    let base = toUsernameBase(fullName).slice(0, 20)
    if (base.length < 3) base = `user_${base}`.replace(/_+$/, '').slice(0, 20)
    const stem = base.slice(0, 15)
    const candidates = [base, ...Array.from({ length: 8 }, () => `${stem}_${randomInt(1000, 9999)}`)]
    const taken = await createUsersRepository(tx).findTakenUsernames(candidates)
    const free = candidates.find((candidate) => !taken.has(candidate))
    return free ?? `${stem}_${randomInt(10_000, 99_999)}`
  }

  return {
    /** Creates an account inside the caller's transaction; duplicate e-mail or username is a field error. */
    async createAccount(tx: Tx, account: NewAccount): Promise<UserRow> {
      const users = createUsersRepository(tx)
      const problems: FieldError[] = []
      if (await users.findByEmail(account.email)) problems.push({ field: 'email', message: 'is already registered' })
      if (account.username && (await users.findTakenUsernames([account.username])).size > 0) {
        problems.push({ field: 'username', message: 'is already taken' })
      }
      if (problems.length > 0) throw validationError(problems)

      const now = clock.now()
      const insert = (username: string) =>
        users.insert({
          id: newId(),
          email: account.email,
          fullName: account.fullName,
          username,
          passwordHash: account.passwordHash,
          isActive: account.isActive ?? false,
          isStaff: account.isStaff ?? false,
          isSuperuser: account.isSuperuser ?? false,
          activatedAt: account.isActive ? now : null,
          createdAt: now,
          updatedAt: now,
        })
      try {
        if (account.username) return await insert(account.username)
        // A generated name can be taken by a concurrent registration between the check and the
        // insert: retry with a new one inside a savepoint, so the transaction survives the clash.
        for (let attempt = 1; ; attempt++) {
          const username = await generateUsername(tx, account.fullName)
          try {
            return await tx.transaction(() => insert(username))
          } catch (error) {
            if (uniqueViolationField(error) !== 'username' || attempt >= 5) throw error
          }
        }
      } catch (error) {
        const field = uniqueViolationField(error)
        if (field) throw fieldError(field, field === 'email' ? 'is already registered' : 'is already taken')
        throw error
      }
    },

    findAccountById: (executor: Executor, id: string) => createUsersRepository(executor).findById(id),
    findAccountByEmail: (executor: Executor, email: string) => createUsersRepository(executor).findByEmail(email),
    lockAccount: (tx: Tx, id: string) => createUsersRepository(tx).lockById(id),

    hasSuperuser: (executor: Executor) => createUsersRepository(executor).hasSuperuser(),
    /** Taken before checking for and creating the first superuser: across instances, one creates it. */
    lockFirstSuperuser: (tx: Tx) => createUsersRepository(tx).lockFirstSuperuser(),

    async updateAccount(
      tx: Tx,
      id: string,
      patch: Partial<Pick<UserRow, 'isActive' | 'activatedAt' | 'passwordHash' | 'tokenVersion' | 'lastLogin' | 'suspendedAt' | 'suspensionReason' | 'isKycVerified'>>,
    ): Promise<UserRow> {
      const row = await createUsersRepository(tx).update(id, { ...patch, updatedAt: clock.now() })
      if (!row) throw notFound('User')
      return row
    },

    async recordLogin(executor: Executor, id: string): Promise<UserRow> {
      const row = await createUsersRepository(executor).update(id, { lastLogin: clock.now() })
      if (!row) throw notFound('User')
      return row
    },

    describe,
    avatarsOf,

    /** Who to tell about operational problems (a disabled webhook endpoint): the active superusers' names and e-mails. */
    async superuserContacts(executor: Executor): Promise<{ email: string; fullName: string }[]> {
      const rows = await createUsersRepository(executor).listActiveSuperusers()
      return rows.map((row) => ({ email: row.email, fullName: row.fullName }))
    },
    /** The users section of `GET /admin/stats`: trigger-kept counters, and two ranges of the created_at index. */
    statistics: defineStats('users', UsersStats, async (executor) => {
      const now = clock.now().getTime()
      const repository = createUsersRepository(executor)
      const [counters, newLast7Days, newLast30Days] = await Promise.all([
        readCounters(executor, 'users'),
        repository.countCreatedSince(new Date(now - 7 * DAY)),
        repository.countCreatedSince(new Date(now - 30 * DAY)),
      ])
      const figure = (name: string) => counters.get(name) ?? 0
      return { total: figure('total'), active: figure('active'), staff: figure('staff'), suspended: figure('suspended'), newLast7Days, newLast30Days }
    }),
    /**
     * For another module's one-statement reads: what `publicSummariesOf` gives for the user in
     * column `userId`, as a JSON object built by PostgreSQL.
     */
    publicSummarySql(userId: AnyColumn | SQL): SQL<UserSummary> {
      return publicSummarySql(userId, (id) => uploads.publicFileUrlSql('user', id, 'avatar'))
    },

    /** For another module's one-statement writes: whether the user in `userId` passed seller KYC (decision 0043). */
    kycVerifiedSql,
    /** For another module's one-statement reads: who the user in `userId` is (`IdentityJson`), and whether a session of theirs may be used. */
    identityJsonSql,
    usableAccountSql,
    /** For another module's statements: whether the account in `userId` can be written to (active, not suspended). */
    availableAccountSql,

    /** What other modules show of users (sellers on services): public fields and avatar, in two queries. */
    async publicSummariesOf(executor: Executor, userIds: string[]): Promise<Map<string, UserSummary>> {
      const [rows, avatars] = await Promise.all([createUsersRepository(executor).findByIds(userIds), avatarsOf(executor, userIds)])
      return new Map(rows.map((row) => [row.id, { id: row.id, fullName: row.fullName, username: row.username, avatar: avatars.get(row.id) ?? null }]))
    },

    async getProfile(actor: Actor): Promise<User & { permissions: Permission[] }> {
      const row = await createUsersRepository(db).findById(actor.id)
      if (!row) throw notFound('User')
      return { ...(await describe(db, row)), permissions: [...actor.permissions].sort() }
    },

    /** What anyone may see. An inactive account has no public profile. */
    async getPublicProfile(userId: string) {
      const row = await createUsersRepository(db).findById(userId)
      if (!row?.isActive) throw notFound('User')
      const [avatars, items, stats] = await Promise.all([avatarsOf(db, [row.id]), portfolio.portfolioOf(db, row.id), publicStats(db, row.id)])
      return {
        id: row.id,
        fullName: row.fullName,
        username: row.username,
        title: row.title,
        description: row.description,
        avatar: avatars.get(row.id) ?? null,
        isKYCVerified: row.isKycVerified,
        createdAt: row.createdAt.toISOString(),
        portfolio: items,
        stats,
      }
    },

    /** Called once at start by the module that keeps profile statistics (users cannot call it: it needs users). */
    registerPublicStats(provider: PublicStatsProvider): void {
      publicStats = provider
    },

    /** `POST /users/me/avatar`: stores the image as the avatar, replacing (and deleting) the old one. */
    async setAvatar(actor: Actor, staged: StagedFile): Promise<User> {
      await uploads.attachFile(actor, staged, avatarSlot(actor.id))
      const row = await createUsersRepository(db).findById(actor.id)
      if (!row) throw notFound('User')
      return describe(db, row)
    },

    async updateProfile(actor: Actor, changes: ProfileChanges): Promise<User> {
      const updated = await db.transaction(async (tx) => {
        const users = createUsersRepository(tx)
        const current = await users.lockById(actor.id)
        if (!current) throw notFound('User')
        // Usernames are fixed once the account exists; the body may repeat the current one (decision 0008).
        if (changes.username !== undefined && changes.username !== current.username) {
          throw fieldError('username', 'cannot be changed after registration')
        }
        const { username: _ignored, avatar, ...allowed } = changes
        if (avatar === null) await uploads.clearSlot(tx, avatarSlot(actor.id))
        else if (avatar !== undefined) await uploads.bindUpload(tx, actor, avatar, avatarSlot(actor.id), 'avatar')
        return (await users.update(actor.id, { ...allowed, updatedAt: clock.now() }))!
      })
      return describe(db, updated)
    },

    /** A page of accounts, as staff see them, with avatars (staff listings add what other modules know). */
    async listAccounts(executor: Executor, filter: UserListFilter, page: PageRequest) {
      const { rows, total } = await createUsersRepository(executor).list(filter, offsetOf(page), page.limit)
      const avatars = await avatarsOf(executor, rows.map((row) => row.id))
      return toPage(
        rows.map((row) => ({ ...toUser(row, avatars.get(row.id) ?? null), suspendedAt: row.suspendedAt?.toISOString() ?? null, suspensionReason: row.suspensionReason })),
        total,
        page,
      )
    },
  }
}

export type UsersService = ReturnType<typeof createUsersService>
