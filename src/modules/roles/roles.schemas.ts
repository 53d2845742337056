import { Type, type Static } from '@sinclair/typebox'
import { Id, Timestamp } from '../../http/common.schemas.ts'
import { permissions } from '../../access/access.ts'

export const PermissionSchema = Type.Union(
  permissions.map((value) => Type.Literal(value)),
  { errorMessage: `must be one of ${permissions.join(', ')}` },
)

const RoleName = Type.String({ minLength: 2, maxLength: 50, pattern: '^\\S(.*\\S)?$', errorMessage: 'must be 2 to 50 characters without surrounding spaces' })
const Permissions = Type.Array(PermissionSchema, { maxItems: permissions.length * 2 })

export const Role = Type.Object({
  id: Id,
  name: Type.String(),
  permissions: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

export const CreateRoleBody = Type.Object(
  { name: RoleName, permissions: Permissions },
  { additionalProperties: false, examples: [{ name: 'Support agents', permissions: ['view_users', 'view_orders', 'view_services'] }] },
)
export type CreateRoleBody = Static<typeof CreateRoleBody>

export const UpdateRoleBody = Type.Object(
  { name: Type.Optional(RoleName), permissions: Type.Optional(Permissions) },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Senior support agents', permissions: ['view_users', 'view_orders', 'manage_orders', 'resolve_disputes'] }] },
)
export type UpdateRoleBody = Static<typeof UpdateRoleBody>
