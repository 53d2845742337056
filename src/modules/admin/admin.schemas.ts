import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, PageQuery, Timestamp } from '../../http/common.schemas.ts'
import { RoleSchema as Role } from '../roles/roles.module.ts'
import { seriesMetrics } from './admin.series.ts'
import { Email, FullName, Password, UserListItem, UserSchema as User, Username, userRoles, userStatuses } from '../users/users.module.ts'

export const CreateStaffBody = Type.Object(
  {
    fullName: FullName,
    username: Username,
    email: Email,
    password: Password,
    roleId: Type.Optional(Type.String({ format: 'uuid', errorMessage: 'must be a role id' })),
  },
  {
    additionalProperties: false,
    examples: [{ fullName: 'Tomás Herrera', username: 'tomas_support', email: 'tomas.herrera@example.com', password: 'Support-Desk-24', roleId: '0196ba0a-6912-76e0-a77c-8b1c09d3b9dd' }],
  },
)
export type CreateStaffBody = Static<typeof CreateStaffBody>

export const SetRolesBody = Type.Object(
  { roleIds: Type.Array(Type.String({ format: 'uuid', errorMessage: 'must be a role id' }), { maxItems: 50 }) },
  { additionalProperties: false, examples: [{ roleIds: ['0196ba0a-6912-76e0-a77c-8b1c09d3b9dd', '0196ce42-26d4-7dd7-ad5e-9fb366a3c0f7'] }] },
)

export const StaffUser = Type.Composite([User, Type.Object({ roles: Type.Array(Role) })])

export const UserIdParams = Type.Object({ userId: Id })

export const AdminUsersQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      role: Type.Optional(Type.Union(userRoles.map((role) => Type.Literal(role)), { errorMessage: `must be one of ${userRoles.join(', ')}`, description: '`client`, `staff` or `admin` (superuser).' })),
      status: Type.Optional(Type.Union(userStatuses.map((status) => Type.Literal(status)), { errorMessage: `must be one of ${userStatuses.join(', ')}` })),
      search: Type.Optional(Type.String({ minLength: 1, maxLength: 100, errorMessage: 'must be 1 to 100 characters', description: 'A fragment of the e-mail, username or full name.' })),
    }),
  ],
  { additionalProperties: false },
)
export type AdminUsersQuery = Static<typeof AdminUsersQuery>

export const AdminUser = Type.Composite([
  UserListItem,
  Type.Object({
    suspendedAt: Nullable(Timestamp),
    suspensionReason: Nullable(Type.String({ description: 'Why staff suspended the account (staff only).' })),
  }),
])

export const AdminUserDetail = Type.Composite([AdminUser, Type.Object({ roles: Type.Array(Role, { description: 'Its staff roles (none for a client).' }) })])

export const SuspendBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', errorMessage: 'must be 1 to 500 characters', description: 'Why: kept with the account and in the audit log.' }) },
  { additionalProperties: false, examples: [{ reason: 'Asked buyers to pay outside the platform in three conversations (reports 412, 415 and 419).' }] },
)

export const SeriesQuery = Type.Object(
  {
    metric: Type.Union(
      seriesMetrics.map((metric) => Type.Literal(metric)),
      { errorMessage: `must be one of ${seriesMetrics.join(', ')}`, description: '`orders` placed, `signups` (accounts created) or `revenue` (platform fees earned, less fees refunded, in cents).' },
    ),
    days: Type.Integer({ minimum: 1, maximum: 366, default: 30, errorMessage: 'must be a whole number from 1 to 366', description: 'How many days, today (UTC) included.' }),
  },
  { additionalProperties: false },
)

export const Series = Type.Object(
  {
    metric: Type.Union(seriesMetrics.map((metric) => Type.Literal(metric))),
    unit: Type.Union([Type.Literal('count'), Type.Literal('cents')]),
    total: Type.Integer({ description: 'The sum of the points.' }),
    points: Type.Array(Type.Object({ date: Type.String({ format: 'date', description: 'A day (UTC).' }), value: Type.Integer() }), { description: 'One per day, oldest first; 0 for a day without any.' }),
  },
  { examples: [{ metric: 'orders', unit: 'count', total: 5, points: [{ date: '2026-11-24', value: 2 }, { date: '2026-11-25', value: 3 }] }] },
)
