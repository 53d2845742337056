import { eq } from 'drizzle-orm'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, type TestContext } from '../../../test/setup/test-app.ts'
import type { Actor } from '../../access/access.ts'
import { AppError } from '../../lib/errors.ts'
import { users } from '../users/users.table.ts'

type Step =
  | { kind: 'deposit'; user: number; cents: number }
  | { kind: 'payout'; user: number; cents: number }
  | { kind: 'approve' | 'reject' | 'cancel'; pick: number }

interface Model {
  available: number[]
  pending: number[]
  open: { id: string; user: number; cents: number }[]
}

const USERS = 3

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('deposit' as const), user: fc.nat(USERS - 1), cents: fc.integer({ min: 50, max: 50_000 }) }),
  fc.record({ kind: fc.constant('payout' as const), user: fc.nat(USERS - 1), cents: fc.integer({ min: 1000, max: 40_000 }) }),
  fc.record({ kind: fc.constantFrom('approve' as const, 'reject' as const, 'cancel' as const), pick: fc.nat(20) }),
)

/**
 * Random sequences of deposits, payouts and their decisions by several users: after every step
 * the books balance and each user's balances equal a model kept here.
 */
describe('the wallet under random sequences of money movements', () => {
  let ctx: TestContext
  let staff: Actor
  beforeAll(async () => {
    ctx = await createTestApp()
    staff = (await ctx.app.container.auth.authenticate((await createUser(ctx, { permissions: ['view_accounts', 'approve_withdrawals'] })).accessToken)).actor
  })
  afterAll(() => ctx.close())

  it('keeps the ledger balanced and every balance equal to the model after each step', async () => {
    const { wallet } = ctx.app.container
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 25 }), async (steps) => {
        const accounts: TestUser[] = []
        for (let index = 0; index < USERS; index++) accounts.push(await createUser(ctx))
        for (const account of accounts) await ctx.database.db.update(users).set({ isKycVerified: true }).where(eq(users.id, account.user.id))
        const actors = await Promise.all(accounts.map(async (account) => (await ctx.app.container.auth.authenticate(account.accessToken)).actor))
        const model: Model = { available: Array(USERS).fill(0), pending: Array(USERS).fill(0), open: [] }

        for (const step of steps) {
          if (step.kind === 'deposit') {
            await wallet.deposit(actors[step.user]!, step.cents / 100)
            model.available[step.user]! += step.cents
          } else if (step.kind === 'payout') {
            const enough = model.available[step.user]! >= step.cents
            try {
              const payout = await wallet.payouts.requestPayout(actors[step.user]!, { amount: step.cents / 100, method: 'paypal', details: { email: 'p@example.test' } })
              expect(enough).toBe(true)
              model.available[step.user]! -= step.cents
              model.pending[step.user]! += step.cents
              model.open.push({ id: payout.id, user: step.user, cents: step.cents })
            } catch (error) {
              expect(enough).toBe(false)
              expect(error).toBeInstanceOf(AppError)
              expect((error as AppError).code).toBe('INSUFFICIENT_FUNDS')
            }
          } else if (model.open.length > 0) {
            const [open] = model.open.splice(step.pick % model.open.length, 1)
            if (step.kind === 'approve') await wallet.payouts.approvePayout(staff, open!.id)
            else if (step.kind === 'reject') await wallet.payouts.rejectPayout(staff, open!.id, 'random rejection')
            else await wallet.payouts.cancelPayout(actors[open!.user]!, open!.id)
            model.pending[open!.user]! -= open!.cents
            if (step.kind !== 'approve') model.available[open!.user]! += open!.cents
          }
          const check = await wallet.checkLedger()
          expect(check.problems).toEqual([])
          for (const [index, account] of accounts.entries()) {
            expect(await wallet.ledger.balancesOf(ctx.database.db, account.user.id)).toEqual({ available: model.available[index], escrow: 0, payout_pending: model.pending[index], clearing: 0 })
          }
        }
      }),
      { seed: 20261123, numRuns: 12 },
    )
  })
})
