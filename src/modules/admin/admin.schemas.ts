import { Type, type Static } from '@sinclair/typebox'
import { Id } from '../../http/common.schemas.ts'
import { RoleSchema as Role } from '../roles/roles.module.ts'
import { Email, FullName, Password, UserSchema as User, Username } from '../users/users.module.ts'

export const CreateStaffBody = Type.Object(
  {
    fullName: FullName,
    username: Username,
    email: Email,
    password: Password,
    roleId: Type.Optional(Type.String({ format: 'uuid', errorMessage: 'must be a role id' })),
  },
  { additionalProperties: false },
)
export type CreateStaffBody = Static<typeof CreateStaffBody>

export const SetRolesBody = Type.Object(
  { roleIds: Type.Array(Type.String({ format: 'uuid', errorMessage: 'must be a role id' }), { maxItems: 50 }) },
  { additionalProperties: false },
)

export const StaffUser = Type.Composite([User, Type.Object({ roles: Type.Array(Role) })])

export const UserIdParams = Type.Object({ userId: Id })
