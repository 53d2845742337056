import type { AnyColumn, SQL } from 'drizzle-orm'
import { roleOf } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import { DAY, type Clock } from '../../lib/clock.ts'
import { defineStats, readCounters } from '../../platform/statistics/statistics.ts'
import type { PortfolioService } from '../portfolio/portfolio.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import { createAccounts } from './accounts.service.ts'
import { createProfiles } from './profiles.service.ts'
import {
  accountStandingSql,
  atSellerLevelSql,
  availableAccountSql,
  createUsersRepository,
  identityJsonSql,
  kycVerifiedSql,
  publicSummarySql,
  sellerLevelSql,
  sellersAboveNewSql,
  levelsAboveNewSql,
  usableAccountSql,
  type UserListFilter,
} from './users.repository.ts'
import { UsersStats, type UserSummary } from './users.schemas.ts'
import type { UserRow } from './users.table.ts'

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

type AvatarUploads = Pick<UploadsService, 'filesOf' | 'urlOf' | 'bindUpload' | 'clearSlot' | 'attachFile' | 'publicFileUrlSql'>

/**
 * The users module's API: accounts (for auth, admin and the command line) and profiles each in
 * their own file; here what other modules read of users, in Node and as SQL.
 */
export function createUsersService(deps: { db: Db; clock: Clock; uploads: AvatarUploads; portfolio: Pick<PortfolioService, 'portfolioOf'> }) {
  const { db, clock, uploads, portfolio } = deps

  /** Avatar URLs of many users in one query (lists must not query per user). */
  async function avatarsOf(executor: Executor, userIds: string[]): Promise<Map<string, string>> {
    const rows = await uploads.filesOf(executor, 'user', userIds, 'avatar')
    return new Map(rows.map((row) => [row.objectId!, uploads.urlOf(row)]))
  }

  /** The account as its owner sees it, with its avatar. */
  const describe = async (executor: Executor, row: UserRow): Promise<User> => toUser(row, (await avatarsOf(executor, [row.id])).get(row.id) ?? null)

  return {
    ...createAccounts({ clock }),
    ...createProfiles({ db, clock, uploads, portfolio, avatarsOf, describe }),
    describe,
    avatarsOf,

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

    /** For another module's one-statement reads: the seller level of the user in `userId`, and whether it is one of a list. */
    sellerLevelSql,
    atSellerLevelSql,
    sellersAboveNewSql,
    levelsAboveNewSql,

    /** For another module's one-statement writes: whether the user in `userId` passed seller KYC (decision 0043). */
    kycVerifiedSql,
    /** For another module's one-statement reads: who the user in `userId` is (`IdentityJson`), and whether a session of theirs may be used. */
    identityJsonSql,
    usableAccountSql,
    /** For another module's statements: whether the account in `userId` can be written to (active, not suspended). */
    availableAccountSql,
    /** For another module's one-statement writes: whether the account in `userId` can be written to, cannot, or is unknown. */
    accountStandingSql,

    /** What other modules show of users (sellers on services): public fields and avatar, in two queries. */
    async publicSummariesOf(executor: Executor, userIds: string[]): Promise<Map<string, UserSummary>> {
      const [rows, avatars] = await Promise.all([createUsersRepository(executor).findByIds(userIds), avatarsOf(executor, userIds)])
      return new Map(rows.map((row) => [row.id, { id: row.id, fullName: row.fullName, username: row.username, avatar: avatars.get(row.id) ?? null }]))
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
