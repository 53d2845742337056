import { randomInt } from 'node:crypto'
import type { Executor, Tx } from '../../db/client.ts'
import { uniqueViolation } from '../../db/errors.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, notFound, validationError, type FieldError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { toUsernameBase } from '../../lib/text.ts'
import { createUsersRepository } from './users.repository.ts'
import type { SellerLevel } from './users.schemas.ts'
import type { UserRow } from './users.table.ts'

export interface NewAccount {
  email: string
  fullName: string
  username?: string
  passwordHash: string
  isActive?: boolean
  isStaff?: boolean
  isSuperuser?: boolean
}

const UNIQUE_FIELDS: Record<string, string> = { users_email_unique: 'email', users_username_unique: 'username' }

/** Maps a unique-constraint race on users to the field it concerns. */
const uniqueViolationField = (error: unknown): string | undefined => UNIQUE_FIELDS[uniqueViolation(error) ?? '']

/** A free username from the full name: the name itself, else it with a random number. */
async function generateUsername(tx: Tx, fullName: string): Promise<string> {
  let base = toUsernameBase(fullName).slice(0, 20)
  if (base.length < 3) base = `user_${base}`.replace(/_+$/, '').slice(0, 20)
  const stem = base.slice(0, 15)
  const candidates = [base, ...Array.from({ length: 8 }, () => `${stem}_${randomInt(1000, 9999)}`)]
  const taken = await createUsersRepository(tx).findTakenUsernames(candidates)
  const free = candidates.find((candidate) => !taken.has(candidate))
  return free ?? `${stem}_${randomInt(10_000, 99_999)}`
}

/** Accounts as other modules use them (auth, admin, the command line): created, found, locked, changed. */
export function createAccounts(deps: { clock: Clock }) {
  const { clock } = deps
  return {
    /** Creates an account inside the caller's transaction; duplicate e-mail or username is a field error. */
    async createAccount(tx: Tx, account: NewAccount): Promise<UserRow> {
      const users = createUsersRepository(tx)
      const problems: FieldError[] = []
      if (await users.findByEmail(account.email)) problems.push({ field: 'email', message: 'is already registered' })
      if (account.username && (await users.findTakenUsernames([account.username])).size > 0) {
        problems.push({ field: 'username', message: 'is already taken' })
      }
      if (problems.length > 0) throw validationError(problems)

      const now = clock.now()
      const insert = (username: string) =>
        users.insert({
          id: newId(),
          email: account.email,
          fullName: account.fullName,
          username,
          passwordHash: account.passwordHash,
          isActive: account.isActive ?? false,
          isStaff: account.isStaff ?? false,
          isSuperuser: account.isSuperuser ?? false,
          activatedAt: account.isActive ? now : null,
          createdAt: now,
          updatedAt: now,
        })
      try {
        if (account.username) return await insert(account.username)
        // A generated name can be taken by a concurrent registration between the check and the
        // insert: retry with a new one inside a savepoint, so the transaction survives the clash.
        for (let attempt = 1; ; attempt++) {
          const username = await generateUsername(tx, account.fullName)
          try {
            return await tx.transaction(() => insert(username))
          } catch (error) {
            if (uniqueViolationField(error) !== 'username' || attempt >= 5) throw error
          }
        }
      } catch (error) {
        const field = uniqueViolationField(error)
        if (field) throw fieldError(field, field === 'email' ? 'is already registered' : 'is already taken')
        throw error
      }
    },

    findAccountById: (executor: Executor, id: string) => createUsersRepository(executor).findById(id),
    findAccountByEmail: (executor: Executor, email: string) => createUsersRepository(executor).findByEmail(email),
    lockAccount: (tx: Tx, id: string) => createUsersRepository(tx).lockById(id),

    hasSuperuser: (executor: Executor) => createUsersRepository(executor).hasSuperuser(),
    /** Taken before checking for and creating the first superuser: across instances, one creates it. */
    lockFirstSuperuser: (tx: Tx) => createUsersRepository(tx).lockFirstSuperuser(),

    async updateAccount(
      tx: Tx,
      id: string,
      patch: Partial<Pick<UserRow, 'isActive' | 'activatedAt' | 'passwordHash' | 'tokenVersion' | 'lastLogin' | 'suspendedAt' | 'suspensionReason' | 'isKycVerified'>>,
    ): Promise<UserRow> {
      const row = await createUsersRepository(tx).update(id, { ...patch, updatedAt: clock.now() })
      if (!row) throw notFound('User')
      return row
    },

    /** The seller level evaluation reads accounts in batches by id (see `listForLevelEvaluation`). */
    accountsForLevelEvaluation: (executor: Executor, afterId: string | null, limit: number, evaluatedBefore?: Date) => createUsersRepository(executor).listForLevelEvaluation(afterId, limit, evaluatedBefore),
    markLevelsEvaluated: (executor: Executor, ids: string[], at: Date) => createUsersRepository(executor).markLevelsEvaluated(ids, at),

    /** A new seller level, evaluated at `at`, in the caller's transaction (the account locked there). */
    async recordSellerLevel(tx: Tx, id: string, level: SellerLevel, at: Date): Promise<void> {
      await createUsersRepository(tx).update(id, { sellerLevel: level, levelEvaluatedAt: at })
    },

    async recordLogin(executor: Executor, id: string): Promise<UserRow> {
      const row = await createUsersRepository(executor).update(id, { lastLogin: clock.now() })
      if (!row) throw notFound('User')
      return row
    },

    /** Who to tell about operational problems (a disabled webhook endpoint): the active superusers' names and e-mails. */
    async superuserContacts(executor: Executor): Promise<{ email: string; fullName: string }[]> {
      const rows = await createUsersRepository(executor).listActiveSuperusers()
      return rows.map((row) => ({ email: row.email, fullName: row.fullName }))
    },
  }
}
