import { Type, type Static } from '@sinclair/typebox'
import { Nullable, oneOfFields } from '../../http/common.schemas.ts'
import { Email, FullName, Identity, Password, UserSchema as User, Username } from '../users/users.module.ts'

/** What a statement reads of a session (`sessionJsonSql`): whether it is live, and who its user is. Never part of an answer. */
export const SessionState = Type.Object({ live: Type.Boolean(), account: Nullable(Identity) })
export type SessionState = Static<typeof SessionState>

const Token = Type.String({ minLength: 1, maxLength: 4096 })

/** What the tokens of the examples look like: signed JWTs, here with made-up signatures. */
const SAMPLE_TOKENS = {
  activation:
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwMTk1NjQyYy03M2RiLTc3N2YtODY4ZS01NzEyNjUwMDljMDYiLCJpYXQiOjE3NTEzNjA0MDAsImV4cCI6MTc1MTQ0NjgwMH0.PgkYVeni-cR8-ntRnGPWy5OzQLidBYnJyWEoBjdnJq0',
  refresh:
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwMTk1NjQyYy03M2RiLTc3N2YtODY4ZS01NzEyNjUwMDljMDYiLCJqdGkiOiIwMTk1OTc1Ni1kZTBjLTczNWUtYTYxMS0xOWU5YzEwYzIyYjAiLCJpYXQiOjE3NTEzNjA0MDAsImV4cCI6MTc1MTk2NTIwMH0.G38ni1H8D6LzybHs8UlrnHnNhDW3FoLAHk14x6sgHJw',
  reset:
    'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwMTk1NjQyYy03M2RiLTc3N2YtODY4ZS01NzEyNjUwMDljMDYiLCJlbWFpbCI6Im1hcmlhLmdvbnphbGV6QGV4YW1wbGUuY29tIiwiaWF0IjoxNzUxMzYwNDAwLCJleHAiOjE3NTEzNjQwMDB9.FpBM51dR-_yWdaMzKsB6VTm_Hi6xHGyDG8YkPFmci5U',
}

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Password,
    fullName: Type.Optional(FullName),
    name: Type.Optional(Type.String({ ...FullName, description: 'Also accepted for `fullName`; one of the two is required.' })),
    username: Type.Optional(Type.String({ ...Username, description: 'Generated from the full name when absent.' })),
  },
  {
    additionalProperties: false,
    anyOf: oneOfFields('fullName', 'name'),
    examples: [{ email: 'maria.gonzalez@example.com', password: 'Brand-Studio-42', fullName: 'María González', username: 'mariagonzalez' }],
  },
)
export type RegisterBody = Static<typeof RegisterBody>

export const TokenBody = Type.Object({ token: Token }, { additionalProperties: false, examples: [{ token: SAMPLE_TOKENS.activation }] })

export const EmailBody = Type.Object({ email: Email }, { additionalProperties: false, examples: [{ email: 'maria.gonzalez@example.com' }] })

export const EmailQuery = Type.Object({ email: Email }, { additionalProperties: false })

export const LoginBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false, examples: [{ email: 'lena.hoffmann@example.com', password: 'Watercolour-Fox-7' }] },
)

export const RefreshBody = Type.Object(
  {
    refreshToken: Type.Optional(Type.String({ ...Token, description: 'The refresh token (also accepted as `refresh`).' })),
    refresh: Type.Optional(Type.String({ ...Token, description: 'Also accepted for `refreshToken`.' })),
  },
  {
    additionalProperties: false,
    anyOf: oneOfFields('refreshToken', 'refresh'),
    description: 'Send the refresh token as `refreshToken` or `refresh`.',
    examples: [{ refreshToken: SAMPLE_TOKENS.refresh }, { refresh: SAMPLE_TOKENS.refresh }],
  },
)
export type RefreshBody = Static<typeof RefreshBody>

export const LogoutBody = Type.Object(
  {
    refreshToken: Type.Optional(Type.String({ ...Token, description: 'Also end the session of this refresh token.' })),
    refresh: Type.Optional(Type.String(Token)),
  },
  { additionalProperties: false, examples: [{ refreshToken: SAMPLE_TOKENS.refresh }] },
)
export type LogoutBody = Static<typeof LogoutBody>

export const ResetPasswordBody = Type.Object({ token: Token, password: Password }, { additionalProperties: false, examples: [{ token: SAMPLE_TOKENS.reset, password: 'New-Palette-77' }] })

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
