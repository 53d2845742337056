import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, PageQuery, StringEnum, Timestamp } from '../../http/common.schemas.ts'
import { Portfolio } from '../portfolio/portfolio.module.ts'
import { permissions } from '../../access/access.ts'
import { defineForm } from '../../http/multipart.ts'
import { TAG_RULES } from '../uploads/uploads.module.ts'
import { Email, FullName, Password, Username } from './account-fields.ts'

export { Email, FullName, Password, Username }

const Title = Type.String({ maxLength: 100, errorMessage: 'must be at most 100 characters' })
const Description = Type.String({ maxLength: 1000, errorMessage: 'must be at most 1000 characters' })
const Phone = Type.String({ maxLength: 26, pattern: '^\\+?[0-9][0-9 ()-]{3,24}$', errorMessage: 'must be a phone number such as +1 555 0100' })

export const User = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    fullName: Type.String(),
    username: Type.String(),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    avatar: Nullable(Type.String({ description: 'URL of the avatar image.' })),
    isActive: Type.Boolean(),
    isStaff: Type.Boolean(),
    isSuperuser: Type.Boolean(),
    isKYCVerified: Type.Boolean(),
    role: Type.Union([Type.Literal('client'), Type.Literal('staff'), Type.Literal('admin')], {
      description: '`client` for regular users (they buy and sell), `staff`, or `admin` for superusers.',
    }),
    status: Type.Union([Type.Literal('active'), Type.Literal('inactive'), Type.Literal('suspended')], {
      description: '`suspended` while staff have suspended the account (it cannot be used); else `active` or `inactive` (not activated yet, or deactivated).',
    }),
    lastLogin: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { description: 'An account as its owner and staff see it.' },
)

/**
 * What anyone may see of a user beside their work: the one declaration every module's answers use
 * (a service's seller, an order's parties, a reviewer, a chat participant), and the schema the
 * users module's SQL fragment builds it from (`publicSummarySql`).
 */
export const UserSummary = Type.Object({ id: Id, fullName: Type.String(), username: Type.String(), avatar: Nullable(Type.String()) })
export type UserSummary = Static<typeof UserSummary>

/** Who a user is, as authorisation needs it (an actor without its permissions): never part of an answer. */
export const Identity = Type.Object({ id: Id, email: Type.String(), fullName: Type.String(), isStaff: Type.Boolean(), isSuperuser: Type.Boolean() })
export type Identity = Static<typeof Identity>

export const Me = Type.Composite([
  User,
  Type.Object({
    permissions: Type.Array(Type.Union(permissions.map((value) => Type.Literal(value))), { description: 'What the caller may do in the admin area.' }),
    unreadNotifications: Type.Integer({ description: 'How many of your notifications are unread (`GET /notifications?unread=true`).' }),
  }),
])

export const UpdateMeBody = Type.Object(
  {
    fullName: Type.Optional(FullName),
    name: Type.Optional(Type.String({ ...FullName, description: 'Also accepted for `fullName`.' })),
    title: Type.Optional(Nullable(Title)),
    description: Type.Optional(Nullable(Description)),
    bio: Type.Optional(Nullable(Type.String({ ...Description, description: 'Also accepted for `description`.' }))),
    phone: Type.Optional(Nullable(Phone)),
    username: Type.Optional(Type.String({ maxLength: 20, description: 'Accepted only when unchanged: usernames are fixed after registration.' })),
    avatar: Type.Optional(
      Nullable(Type.String({ format: 'uuid', errorMessage: 'must be an upload id', description: 'Id of a JPEG or PNG you uploaded (POST /uploads), or null to remove the avatar.' })),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Either spelling is accepted; at least one field; fields not listed here (such as `isStaff` or `email`) are refused.',
    examples: [
      {
        fullName: 'María González',
        title: 'Brand identity designer',
        description: 'I help cafés, bakeries and small shops look as good as what they sell: logos, packaging and brand guides.',
        phone: '+34 612 345 678',
      },
    ],
  },
)
export type UpdateMeBody = Static<typeof UpdateMeBody>

export const ListUsersQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      search: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Matches e-mail, username or full name.' })),
      isActive: Type.Optional(Type.Boolean()),
    }),
  ],
  { additionalProperties: false },
)
export type ListUsersQuery = Static<typeof ListUsersQuery>

export const UserListItem = Type.Composite([User, Type.Object({ servicesCount: Type.Integer({ minimum: 0 }) })])

export const sellerLevels = ['new', 'level_one', 'level_two', 'top_rated'] as const
export const SellerLevel = StringEnum(sellerLevels, { description: 'The seller level the worker last computed, lowest first: `new`, `level_one`, `level_two`, `top_rated` (docs/seller-levels.md).' })
export type SellerLevel = Static<typeof SellerLevel>

export const PublicStats = Type.Object(
  {
    servicesCount: Type.Integer({ description: 'Active services.' }),
    completedOrdersCount: Type.Integer({ description: 'Orders completed as seller.' }),
    averageRating: Type.Number({ description: 'Average rating of the public reviews buyers gave the user as seller, two decimals; 0 without reviews.' }),
    reviewsCount: Type.Integer({ description: 'Public reviews buyers gave the user as seller.' }),
  },
  { description: 'The public profile’s statistics: active services, orders completed as seller, average rating and reviews (`GET /users/{userId}/stats` has the extended record).' },
)

export const PublicProfile = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    fullName: Type.String(),
    username: Type.String(),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    avatar: Nullable(Type.String({ description: 'URL of the avatar image.' })),
    isKYCVerified: Type.Boolean({ description: 'The seller passed identity verification.' }),
    createdAt: Timestamp,
    portfolio: Portfolio,
    sellerLevel: SellerLevel,
    stats: PublicStats,
    buyerRating: Type.Number({ description: 'Average rating of the public reviews sellers gave the user as buyer, two decimals; 0 without any.' }),
    buyerReviewsCount: Type.Integer({ description: 'Public reviews sellers gave the user as buyer.' }),
  },
  { description: 'What anyone may see of a user: no e-mail, phone, flags or notes.' },
)

export const UsersStats = Type.Object({
  total: Type.Integer({ description: 'Every account.' }),
  active: Type.Integer({ description: 'Activated and not suspended.' }),
  staff: Type.Integer({ description: 'Staff and superusers.' }),
  suspended: Type.Integer(),
  newLast7Days: Type.Integer({ description: 'Accounts created in the last 7 days.' }),
  newLast30Days: Type.Integer({ description: 'Accounts created in the last 30 days.' }),
})

export const AvatarForm = defineForm({ files: { file: { description: 'The image (exactly one): JPEG or PNG.', maxBytes: TAG_RULES.avatar.maxBytes } } })
