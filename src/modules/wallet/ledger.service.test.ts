import { eq } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { createUser } from '../../../test/factories/users.ts'
import { expectBooksBalance } from '../../../test/setup/ledger.ts'
import { untilAQueryWaitsForALock } from '../../../test/setup/locks.ts'
import { createTestApp, type TestContext } from '../../../test/setup/test-app.ts'
import { AppError } from '../../lib/errors.ts'
import { ledgerAccounts, ledgerEntries } from './ledger.table.ts'

describe('the ledger', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterEach(() => expectBooksBalance(ctx))
  afterAll(() => ctx.close())

  const ledger = () => ctx.app.container.wallet.ledger
  const db = () => ctx.app.container.db
  const fund = (userId: string, amountCents: number) =>
    db().transaction((tx) => ledger().transfer(tx, { from: { platform: 'external' }, to: { userId, kind: 'available' }, amountCents, type: 'deposit', description: 'test funds' }))

  it('moves money between two accounts with entries that sum to zero and running balances', async () => {
    const { user } = await createUser(ctx)
    await fund(user.id, 5000)
    const { transactionId } = await db().transaction((tx) =>
      ledger().transfer(tx, { from: { userId: user.id, kind: 'available' }, to: { userId: user.id, kind: 'escrow' }, amountCents: 1250, type: 'order_payment', description: 'order' }),
    )
    expect(await ledger().balancesOf(db(), user.id)).toEqual({ available: 3750, escrow: 1250, payout_pending: 0, clearing: 0 })
    const entries = await ctx.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, transactionId))
    expect(entries.map((entry) => entry.amountCents).sort((a, b) => a - b)).toEqual([-1250, 1250])
    expect(entries.map((entry) => entry.balanceAfterCents).sort((a, b) => a - b)).toEqual([1250, 3750])
  })

  it('refuses to overdraw a user account with 422 INSUFFICIENT_FUNDS, moving nothing', async () => {
    const { user } = await createUser(ctx)
    await fund(user.id, 1000)
    const attempt = db().transaction((tx) =>
      ledger().transfer(tx, { from: { userId: user.id, kind: 'available' }, to: { userId: user.id, kind: 'payout_pending' }, amountCents: 1001, type: 'payout', description: 'too much' }),
    )
    await expect(attempt).rejects.toMatchObject({ statusCode: 422, code: 'INSUFFICIENT_FUNDS' })
    await expect(attempt).rejects.toBeInstanceOf(AppError)
    expect(await ledger().balancesOf(db(), user.id)).toEqual({ available: 1000, escrow: 0, payout_pending: 0, clearing: 0 })
  })

  it('refuses zero, negative and fractional amounts as programming errors', async () => {
    const { user } = await createUser(ctx)
    for (const amountCents of [0, -5, 1.5]) {
      await expect(
        db().transaction((tx) => ledger().transfer(tx, { from: { platform: 'external' }, to: { userId: user.id, kind: 'available' }, amountCents, type: 'adjustment', description: 'x' })),
      ).rejects.toThrow(/positive whole number of cents/)
    }
  })

  it('lets the database refuse a negative user balance even if the service were bypassed', async () => {
    const { user } = await createUser(ctx)
    await fund(user.id, 100)
    await expect(ctx.database.db.update(ledgerAccounts).set({ balanceCents: -1 }).where(eq(ledgerAccounts.ownerId, user.id))).rejects.toThrow()
  })

  it('never overdraws under 60 concurrent withdrawals of 10.00 from 200.00: exactly 20 succeed', async () => {
    const { user } = await createUser(ctx)
    await fund(user.id, 20_000)
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, () =>
        db().transaction((tx) =>
          ledger().transfer(tx, { from: { userId: user.id, kind: 'available' }, to: { userId: user.id, kind: 'payout_pending' }, amountCents: 1000, type: 'payout', description: 'payout' }),
        ),
      ),
    )
    const refused = results.filter((result) => result.status === 'rejected')
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(20)
    expect(refused).toHaveLength(40)
    for (const result of refused) expect(result.reason).toMatchObject({ code: 'INSUFFICIENT_FUNDS' })
    expect(await ledger().balancesOf(db(), user.id)).toEqual({ available: 0, escrow: 0, payout_pending: 20_000, clearing: 0 })
    const balancesAfter = await ctx.database.db
      .select({ after: ledgerEntries.balanceAfterCents })
      .from(ledgerEntries)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
      .where(eq(ledgerAccounts.ownerId, user.id))
    expect(balancesAfter.every((row) => row.after >= 0)).toBe(true)
  })

  // A transfer that waited on a lock must check and move the balance the other transfer left, not
  // the one it saw when its statement began (a single data-modifying CTE gets this wrong).
  it.runIf(inject('pgTemplate') !== '')('checks and moves the balance a concurrent transfer committed while it waited for the lock', async () => {
    const { user } = await createUser(ctx)
    await fund(user.id, 500)
    let releaseDeposit: () => void = () => undefined
    let depositLocked: () => void = () => undefined
    const depositHeld = new Promise<void>((resolve) => (releaseDeposit = resolve))
    const locked = new Promise<void>((resolve) => (depositLocked = resolve))
    const deposit = db().transaction(async (tx) => {
      await ledger().transfer(tx, { from: { platform: 'external' }, to: { userId: user.id, kind: 'available' }, amountCents: 1500, type: 'deposit', description: 'slow deposit' })
      depositLocked()
      await depositHeld
    })
    // The payout starts once the deposit holds the account's lock, so it has to wait for it.
    await locked
    const payout = db().transaction((tx) =>
      ledger().transfer(tx, { from: { userId: user.id, kind: 'available' }, to: { userId: user.id, kind: 'payout_pending' }, amountCents: 2000, type: 'payout', description: 'needs the deposit' }),
    )
    await untilAQueryWaitsForALock(ctx.database.db)
    releaseDeposit()
    await deposit
    await payout
    expect(await ledger().balancesOf(db(), user.id)).toEqual({ available: 0, escrow: 0, payout_pending: 2000, clearing: 0 })
  })
})
