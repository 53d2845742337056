import { expect } from 'vitest'
import type { TestContext } from './test-app.ts'

/** Fails the test when the books do not balance (run it after every test that moves money). */
export async function expectBooksBalance(ctx: TestContext): Promise<void> {
  const check = await ctx.app.container.wallet.checkLedger()
  expect(check.problems).toEqual([])
  expect(check.ok).toBe(true)
}
