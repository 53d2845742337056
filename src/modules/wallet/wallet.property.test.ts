import { eq } from 'drizzle-orm'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createActiveService } from '../../../test/factories/orders.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { createTestApp, type TestContext } from '../../../test/setup/test-app.ts'
import type { Actor } from '../../access/access.ts'
import { DAY, HOUR } from '../../lib/clock.ts'
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

type MoneyStep =
  | { kind: 'deposit'; user: number; cents: number }
  | { kind: 'order'; buyer: number; seller: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'split'; pick: number; refundCents: number }
  | { kind: 'partial'; pick: number; cents: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'tip'; pick: number; cents: number }
  | { kind: 'refund'; pick: number; cents: number }
  | { kind: 'advance'; hours: number }

interface ModelOrder {
  id: string
  buyer: number
  seller: number
  status: 'delivered' | 'completed' | 'cancelled'
  /** What the order still holds in its buyer's escrow: the price less accepted partial refunds. */
  left: number
  completedAt: number
  tipped: boolean
}

/** An earning still clearing: who gets it, what is left of it, when it becomes available. */
interface ModelEarning {
  seller: number
  orderId: string
  cents: number
  availableAt: number
}

interface OrdersModel {
  available: number[]
  escrow: number[]
  clearing: number[]
  orders: ModelOrder[]
  earnings: ModelEarning[]
}

const PRICE = 10_000
const CLEARANCE_MS = 2 * DAY
const TIP_WINDOW_MS = 14 * DAY
/** PLATFORM_FEE_PERCENT 10 and TIP_FEE_PERCENT 10, rounded half-up to the cent. */
const feeOf = (cents: number) => Math.floor((cents * 1000 + 5000) / 10000)

const moneyStep: fc.Arbitrary<MoneyStep> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deposit' as const), user: fc.nat(USERS - 1), cents: fc.integer({ min: 50, max: 30_000 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('order' as const), buyer: fc.nat(USERS - 1), seller: fc.nat(USERS - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('complete' as const), pick: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('split' as const), pick: fc.nat(20), refundCents: fc.integer({ min: 0, max: PRICE }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('partial' as const), pick: fc.nat(20), cents: fc.integer({ min: 1, max: PRICE }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tip' as const), pick: fc.nat(20), cents: fc.integer({ min: 100, max: 5000 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat(20), cents: fc.integer({ min: 1, max: 12_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 72 }) }) },
)

/** The code an AppError answered with, or the error itself when it is anything else. */
async function outcomeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run()
    return 'ok'
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    return error.code
  }
}

/**
 * Random sequences of deposits, orders, partial refunds and cancellations agreed between the
 * parties, completions, split resolutions, tips, staff refunds and
 * the worker's clearance (two runs at once, after the injected clock moves): after every step the
 * books balance, and each user's available, escrow and clearing balances and next clearing time
 * equal a model kept here.
 */
describe('earnings, clearance and staff refunds under random sequences', () => {
  let ctx: TestContext
  let staff: Actor
  beforeAll(async () => {
    ctx = await createTestApp({ env: { CLEARANCE_DAYS: '2', TIP_FEE_PERCENT: '10' } })
    staff = (await ctx.app.container.auth.authenticate((await createUser(ctx, { permissions: ['view_orders', 'manage_orders', 'resolve_disputes'] })).accessToken)).actor
  })
  afterAll(() => ctx.close())

  it('keeps the ledger balanced and every balance equal to the model after each step', async () => {
    const { wallet, orders } = ctx.app.container
    await fc.assert(
      fc.asyncProperty(fc.array(moneyStep, { minLength: 10, maxLength: 30 }), async (steps) => {
        const accounts: TestUser[] = []
        for (let index = 0; index < USERS; index++) accounts.push(await createUser(ctx))
        const services = await Promise.all(accounts.map((account) => createActiveService(ctx, account)))
        const actors = await Promise.all(accounts.map(async (account) => (await ctx.app.container.auth.authenticate(account.accessToken)).actor))
        // Everyone starts with 300.00, enough for a few orders.
        for (const actor of actors) await wallet.deposit(actor, 300)
        const model: OrdersModel = { available: Array(USERS).fill(30_000), escrow: Array(USERS).fill(0), clearing: Array(USERS).fill(0), orders: [], earnings: [] }
        const now = () => ctx.clock.now().getTime()
        const earn = (seller: number, orderId: string, cents: number) => {
          if (cents === 0) return
          model.clearing[seller]! += cents
          model.earnings.push({ seller, orderId, cents, availableAt: now() + CLEARANCE_MS })
        }
        const pick = <T>(candidates: T[], index: number): T | undefined => (candidates.length > 0 ? candidates[index % candidates.length] : undefined)

        for (const step of steps) {
          if (step.kind === 'deposit') {
            await wallet.deposit(actors[step.user]!, step.cents / 100)
            model.available[step.user]! += step.cents
          } else if (step.kind === 'order') {
            if (step.buyer === step.seller) continue
            const placing = () => orders.placeOrder(actors[step.buyer]!, { serviceId: services[step.seller]!.serviceId, packageId: services[step.seller]!.packageIds.basic })
            let id = ''
            const outcome = await outcomeOf(async () => (id = (await placing()).id))
            if (model.available[step.buyer]! < PRICE) {
              expect(outcome).toBe('INSUFFICIENT_FUNDS')
              continue
            }
            expect(outcome).toBe('ok')
            model.available[step.buyer]! -= PRICE
            model.escrow[step.buyer]! += PRICE
            await orders.changeStatus(actors[step.seller]!, id, 'in_progress', undefined)
            await orders.deliverOrder(actors[step.seller]!, id, 'Here it is', [])
            model.orders.push({ id, buyer: step.buyer, seller: step.seller, status: 'delivered', left: PRICE, completedAt: 0, tipped: false })
          } else if (step.kind === 'complete' || step.kind === 'split') {
            const order = pick(model.orders.filter((candidate) => candidate.status === 'delivered'), step.pick)
            if (!order) continue
            // A split divides what is left after partial refunds, and the fee is the order's rate on what the seller gets.
            const refundCents = step.kind === 'split' ? Math.min(step.refundCents, order.left) : 0
            if (step.kind === 'complete') await orders.changeStatus(actors[order.buyer]!, order.id, 'completed', undefined)
            else {
              await orders.changeStatus(actors[order.buyer]!, order.id, 'disputed', 'Not what we agreed')
              await orders.resolveSplit(staff, order.id, { refundAmount: refundCents / 100, note: 'Split by the model' })
            }
            const rest = order.left - refundCents
            model.escrow[order.buyer]! -= order.left
            model.available[order.buyer]! += refundCents
            earn(order.seller, order.id, rest - feeOf(rest))
            Object.assign(order, { status: rest > 0 ? 'completed' : 'cancelled', left: 0, completedAt: now() })
          } else if (step.kind === 'partial' || step.kind === 'cancel') {
            // A request between the parties, accepted by the other one: a partial refund the seller offers, or a cancellation the buyer asks.
            const order = pick(model.orders.filter((candidate) => candidate.status === 'delivered'), step.pick)
            if (!order) continue
            const [asker, answerer] = step.kind === 'partial' ? [order.seller, order.buyer] : [order.buyer, order.seller]
            const body = step.kind === 'partial' ? { type: 'partial_refund' as const, reason: 'Part of the work was dropped', amount: step.cents / 100 } : { type: 'cancellation' as const, reason: 'We agreed to stop here' }
            let requestId = ''
            const outcome = await outcomeOf(async () => (requestId = (await orders.openRequest(actors[asker]!, order.id, body)).id))
            const refundCents = step.kind === 'partial' ? step.cents : order.left
            expect(outcome).toBe(step.kind === 'partial' && refundCents >= order.left ? 'VALIDATION_ERROR' : 'ok')
            if (outcome !== 'ok') continue
            await orders.acceptRequest(actors[answerer]!, order.id, requestId)
            model.escrow[order.buyer]! -= refundCents
            model.available[order.buyer]! += refundCents
            order.left -= refundCents
            if (step.kind === 'cancel') order.status = 'cancelled'
          } else if (step.kind === 'tip') {
            const order = pick(model.orders.filter((candidate) => candidate.status === 'completed'), step.pick)
            if (!order) continue
            const outcome = await outcomeOf(() => orders.tips.tipOrder(actors[order.buyer]!, order.id, step.cents / 100))
            const expected = order.tipped ? 'ALREADY_TIPPED' : now() >= order.completedAt + TIP_WINDOW_MS ? 'TIP_WINDOW_CLOSED' : model.available[order.buyer]! < step.cents ? 'INSUFFICIENT_FUNDS' : 'ok'
            expect(outcome).toBe(expected)
            if (outcome !== 'ok') continue
            order.tipped = true
            model.available[order.buyer]! -= step.cents
            earn(order.seller, order.id, step.cents - feeOf(step.cents))
          } else if (step.kind === 'refund') {
            const order = pick(model.orders.filter((candidate) => candidate.status === 'completed'), step.pick)
            if (!order) continue
            const open = model.earnings.filter((earning) => earning.orderId === order.id && earning.cents > 0)
            const left = open.reduce((sum, earning) => sum + earning.cents, 0)
            const outcome = await outcomeOf(() => orders.staffRefunds.refundAsStaff(staff, order.id, { amount: step.cents / 100, note: 'Refund by the model' }))
            expect(outcome).toBe(left === 0 ? 'ALREADY_CLEARED' : step.cents > left ? 'VALIDATION_ERROR' : 'ok')
            if (outcome !== 'ok') continue
            let rest = step.cents
            for (const earning of open) {
              const taken = Math.min(rest, earning.cents)
              earning.cents -= taken
              rest -= taken
            }
            model.clearing[order.seller]! -= step.cents
            model.available[order.buyer]! += step.cents
          } else {
            ctx.clock.advance(step.hours * HOUR)
            // Two workers' runs at once, until neither finds anything due.
            while ((await Promise.all([wallet.clearDueEarnings(), wallet.clearDueEarnings()])).some((cleared) => cleared > 0));
            for (const earning of model.earnings.filter((candidate) => candidate.cents > 0 && candidate.availableAt <= now())) {
              model.clearing[earning.seller]! -= earning.cents
              model.available[earning.seller]! += earning.cents
              earning.cents = 0
            }
          }

          const check = await wallet.checkLedger()
          expect(check.problems).toEqual([])
          for (const [index, account] of accounts.entries()) {
            expect(await wallet.ledger.balancesOf(ctx.database.db, account.user.id)).toEqual({ available: model.available[index], escrow: model.escrow[index], payout_pending: 0, clearing: model.clearing[index] })
            const next = Math.min(...model.earnings.filter((earning) => earning.seller === index && earning.cents > 0).map((earning) => earning.availableAt))
            expect((await wallet.getWallet(actors[index]!)).nextClearingAt).toBe(Number.isFinite(next) ? new Date(next).toISOString() : null)
          }
        }
      }),
      { seed: 20261125, numRuns: 12 },
    )
    // Twelve sequences of up to 30 steps through the services: minutes on a busy machine.
  }, 300_000)
})
