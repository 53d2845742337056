import { expect } from 'vitest'
import type { UserRow } from '../../src/modules/users/users.table.ts'
import type { Permission } from '../../src/access/access.ts'
import { newId } from '../../src/lib/ids.ts'
import { roles as rolesTable } from '../../src/modules/roles/roles.table.ts'
import { hashPassword } from '../../src/lib/passwords.ts'
import type { TestContext } from '../setup/test-app.ts'

let sequence = 0
export const unique = (prefix = 'u'): string => `${prefix}${process.pid}${Date.now().toString(36)}${(sequence++).toString(36)}`

export const DEFAULT_PASSWORD = 'Passw0rd!'
let defaultHash: Promise<string> | undefined

export interface UserOptions {
  email?: string
  fullName?: string
  username?: string
  password?: string
  isActive?: boolean
  isStaff?: boolean
  isSuperuser?: boolean
  /** Creates a role with these permissions and gives it to the (staff) user. */
  permissions?: Permission[]
}

export interface TestUser {
  user: UserRow
  password: string
  accessToken: string
  refreshToken: string
}

/** Inserts a real account (active by default) and opens a session (a token family) for it, as a login would. */
export async function createUser(ctx: TestContext, options: UserOptions = {}): Promise<TestUser> {
  const { users, roles, auth } = ctx.app.container
  const name = unique()
  const password = options.password ?? DEFAULT_PASSWORD
  const passwordHash = options.password ? await hashPassword(password) : await (defaultHash ??= hashPassword(DEFAULT_PASSWORD))
  const user = await ctx.database.db.transaction(async (tx) => {
    const row = await users.createAccount(tx, {
      email: options.email ?? `${name}@example.test`,
      fullName: options.fullName ?? `Test ${name}`,
      username: options.username ?? name.slice(0, 20),
      passwordHash,
      isActive: options.isActive ?? true,
      isStaff: options.isStaff ?? options.permissions !== undefined,
      isSuperuser: options.isSuperuser ?? false,
    })
    return row
  })
  if (options.permissions) {
    // The role is set up by the test, not by a staff member: no audit row is written for it.
    const [role] = await ctx.database.db
      .insert(rolesTable)
      .values({ id: newId(), name: `role-${name}`, permissions: [...new Set(options.permissions)], createdAt: new Date(), updatedAt: new Date() })
      .returning()
    await ctx.database.db.transaction((tx) => roles.assignRoles(tx, user.id, [role!.id]))
  }
  // Inactive accounts get a session too, so tests can show their tokens are refused.
  return { user, password, ...(await auth.issueSession(user)) }
}

export const createSuperuser = (ctx: TestContext) => createUser(ctx, { isStaff: true, isSuperuser: true })

/** Every field of the user payload as its owner and staff see it. */
const USER_FIELDS = ['createdAt', 'description', 'email', 'fullName', 'id', 'isActive', 'isKYCVerified', 'isStaff', 'isSuperuser', 'lastLogin', 'phone', 'role', 'title', 'updatedAt', 'username']

/** Fields the API must never send for an account (the hash and staff notes never are: docs/api-conventions.md). */
const PRIVATE_FIELDS = ['password', 'passwordHash', 'password_hash', 'notes', 'tokenVersion', 'token_version', 'activatedAt']

/** An account payload: every public field (plus `extra`), and none of the private columns. */
export function expectUserShape(data: Record<string, unknown>, extra: string[] = []): void {
  expect(Object.keys(data)).toEqual(expect.arrayContaining([...USER_FIELDS, ...extra]))
  for (const field of PRIVATE_FIELDS) expect(data).not.toHaveProperty(field)
}

/** A superuser and staff members each holding one area's permissions, as a console team would. */
export async function createStaffTeam(ctx: TestContext) {
  return {
    admin: await createSuperuser(ctx),
    moderator: await createUser(ctx, { permissions: ['view_services', 'approve_services'] }),
    cashier: await createUser(ctx, { permissions: ['view_accounts', 'approve_withdrawals'] }),
    manager: await createUser(ctx, { permissions: ['view_users', 'manage_users'] }),
    reviewer: await createUser(ctx, { permissions: ['view_kyc', 'manage_kyc'] }),
    orderManager: await createUser(ctx, { permissions: ['view_orders', 'manage_orders'] }),
    arbiter: await createUser(ctx, { permissions: ['view_orders', 'resolve_disputes'] }),
  }
}
export type StaffTeam = Awaited<ReturnType<typeof createStaffTeam>>
