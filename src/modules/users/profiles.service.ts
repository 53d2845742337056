import type { Actor, Permission } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { PortfolioService } from '../portfolio/portfolio.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import { createUsersRepository } from './users.repository.ts'
import type { User } from './users.service.ts'
import type { UserRow } from './users.table.ts'

export interface ProfileChanges {
  /** An unattached upload id to become the avatar, or null to remove it. */
  avatar?: string | null
  fullName?: string
  username?: string
  title?: string | null
  description?: string | null
  phone?: string | null
}

const avatarSlot = (userId: string) => ({ objectType: 'user', objectId: userId, tag: 'avatar' }) as const

/** The public profile's statistics (decision 0034). */
export interface PublicStats {
  servicesCount: number
  completedOrdersCount: number
  averageRating: number
  reviewsCount: number
}

/** What the public profile shows of a user's record: as seller (`stats`) and as buyer (the sellers' ratings). */
export interface PublicFigures {
  stats: PublicStats
  buyerRating: number
  buyerReviewsCount: number
}

/** The public profile's figures, provided by the module that keeps them (reviews). */
export type PublicStatsProvider = (executor: Executor, userId: string) => Promise<PublicFigures>

const NO_FIGURES: PublicFigures = { stats: { servicesCount: 0, completedOrdersCount: 0, averageRating: 0, reviewsCount: 0 }, buyerRating: 0, buyerReviewsCount: 0 }

/** How many of a person's notifications are unread, counted by the module that keeps them (notifications). */
export type UnreadNotificationsCounter = (executor: Executor, userId: string) => Promise<number>

export interface ProfileDeps {
  db: Db
  clock: Clock
  uploads: Pick<UploadsService, 'bindUpload' | 'clearSlot' | 'attachFile'>
  portfolio: Pick<PortfolioService, 'portfolioOf'>
  avatarsOf: (executor: Executor, userIds: string[]) => Promise<Map<string, string>>
  /** The account as its owner sees it. */
  describe: (executor: Executor, row: UserRow) => Promise<User>
}

/** A user's own profile (read, edit, avatar) and the public profile anyone may see. */
export function createProfiles(deps: ProfileDeps) {
  const { db, clock, uploads, portfolio, avatarsOf, describe } = deps
  let unreadNotifications: UnreadNotificationsCounter = async () => 0
  let publicFigures: PublicStatsProvider = async () => NO_FIGURES

  return {
    async getProfile(actor: Actor): Promise<User & { permissions: Permission[]; unreadNotifications: number }> {
      const row = await createUsersRepository(db).findById(actor.id)
      if (!row) throw notFound('User')
      const [user, unread] = await Promise.all([describe(db, row), unreadNotifications(db, row.id)])
      return { ...user, permissions: [...actor.permissions].sort(), unreadNotifications: unread }
    },

    /** What anyone may see. An inactive account has no public profile. */
    async getPublicProfile(userId: string) {
      const row = await createUsersRepository(db).findById(userId)
      if (!row?.isActive) throw notFound('User')
      const [avatars, items, figures] = await Promise.all([avatarsOf(db, [row.id]), portfolio.portfolioOf(db, row.id), publicFigures(db, row.id)])
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
        sellerLevel: row.sellerLevel,
        stats: figures.stats,
        buyerRating: figures.buyerRating,
        buyerReviewsCount: figures.buyerReviewsCount,
      }
    },

    /** Called once at start by the module that keeps profile statistics (users cannot call it: it needs users). */
    registerPublicStats(provider: PublicStatsProvider): void {
      publicFigures = provider
    },

    /** Called once at start by the module that keeps notifications (users cannot call it: it needs users). */
    registerUnreadNotifications(counter: UnreadNotificationsCounter): void {
      unreadNotifications = counter
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

  }
}
