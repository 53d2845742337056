import { Type, type Static } from '@sinclair/typebox'
import { Email, FullName, Password, UserSchema as User, Username } from '../users/users.module.ts'

const Token = Type.String({ minLength: 1, maxLength: 4096 })

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Password,
    fullName: Type.Optional(FullName),
    name: Type.Optional(Type.String({ ...FullName, description: 'Also accepted for `fullName`; one of the two is required.' })),
    username: Type.Optional(Type.String({ ...Username, description: 'Generated from the full name when absent.' })),
  },
  { additionalProperties: false },
)
export type RegisterBody = Static<typeof RegisterBody>

export const TokenBody = Type.Object({ token: Token }, { additionalProperties: false })

export const EmailBody = Type.Object({ email: Email }, { additionalProperties: false })

export const EmailQuery = Type.Object({ email: Email }, { additionalProperties: false })

export const LoginBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
)

export const RefreshBody = Type.Object(
  {
    refreshToken: Type.Optional(Type.String({ ...Token, description: 'The refresh token (also accepted as `refresh`).' })),
    refresh: Type.Optional(Type.String({ ...Token, description: 'Also accepted for `refreshToken`.' })),
  },
  { additionalProperties: false, description: 'Send the refresh token as `refreshToken` or `refresh`.' },
)
export type RefreshBody = Static<typeof RefreshBody>

export const LogoutBody = Type.Object(
  {
    refreshToken: Type.Optional(Type.String({ ...Token, description: 'Also end the session of this refresh token.' })),
    refresh: Type.Optional(Type.String(Token)),
  },
  { additionalProperties: false },
)
export type LogoutBody = Static<typeof LogoutBody>

export const ResetPasswordBody = Type.Object({ token: Token, password: Password }, { additionalProperties: false })

export const LoginResult = Type.Object({
  accessToken: Type.String({ description: 'Bearer token, valid 15 minutes.' }),
  refreshToken: Type.String({ description: 'Valid 7 days; exchange it at /auth/refresh.' }),
  user: Type.Composite([User, Type.Object({ name: Type.String({ description: 'Same as `fullName`.' }) })]),
})

export const RefreshResult = Type.Object({
  accessToken: Type.String({ description: 'Bearer token, valid 15 minutes.' }),
  refreshToken: Type.String({
    description: 'Replaces the refresh token sent, which is now spent: sending a spent refresh token again ends the session.',
  }),
})

export const EmailResult = Type.Object({ email: Type.String() })

export const EmailCheckResult = Type.Object({ exists: Type.Boolean(), email: Type.String() })
