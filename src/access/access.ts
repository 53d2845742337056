/**
 * Who is calling and what they may do: the one vocabulary that services, HTTP hooks and the
 * WebSocket upgrade share. Pure: no database, no framework.
 */

/** The eleven permission values, in groups: users, services, orders, KYC, accounts (docs/api-conventions.md). */
export const permissions = [
  'view_users',
  'manage_users',
  'view_services',
  'approve_services',
  'view_orders',
  'manage_orders',
  'resolve_disputes',
  'view_kyc',
  'manage_kyc',
  'view_accounts',
  'approve_withdrawals',
] as const

export type Permission = (typeof permissions)[number]

/** Who is calling: the one value services receive for authorisation decisions. */
export interface Actor {
  id: string
  email: string
  fullName: string
  isStaff: boolean
  isSuperuser: boolean
  permissions: ReadonlySet<Permission>
  /**
   * The HTTP request the actor acts through (its `X-Request-Id`), set when the caller is
   * identified; absent for the worker and the CLI. Audit rows record it (decision 0090).
   */
  requestId?: string
}

/** A superuser has every permission; staff have their roles' permissions; everyone else none. */
export function can(actor: Actor, permission: Permission): boolean {
  if (actor.isSuperuser) return true
  return actor.isStaff && actor.permissions.has(permission)
}

export type UserRole = 'client' | 'staff' | 'admin'

export const roleOf = (user: { isStaff: boolean; isSuperuser: boolean }): UserRole =>
  user.isSuperuser ? 'admin' : user.isStaff ? 'staff' : 'client'

/** The authenticated caller plus the token they presented and its login session (token family). */
export interface Session {
  actor: Actor
  jti: string
  familyId: string
  expiresAt: Date
}

/** What a verified access token says of its session; the session itself is checked in the database. */
export interface AccessClaims {
  /** The user. */
  sub: string
  jti: string
  /** The user's token version when issued. */
  ver: number
  /** The token family (login session). */
  fam: string
  /** Expiry, seconds since the epoch. */
  exp: number
}

/**
 * A caller whose access token is verified (signature, kind, expiry) but whose session is not read
 * yet: the route's own statement reads it beside its data, and the service confirms it (or
 * answers 401) before it answers or writes anything (decision 0087).
 */
export interface UncheckedCaller {
  claims: AccessClaims
  /** As `Actor.requestId`: handed on to the actor once the session is confirmed. */
  requestId?: string
}

/** Who calls a service: an actor whose session is checked, or a token whose session the service's statement checks. */
export type Caller = Actor | UncheckedCaller

export const isUnchecked = (caller: Caller): caller is UncheckedCaller => 'claims' in caller

/**
 * Resolves an access token to its session, or throws a 401 AppError. HTTP hooks and the
 * WebSocket upgrade both take one of these, so neither depends on the auth module itself.
 */
export type Authenticate = (accessToken: string) => Promise<Session>
