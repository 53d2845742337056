import { eq } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { deposits, type DepositRow } from './deposits.table.ts'

export function createDepositsRepository(db: Executor) {
  return {
    async insert(row: typeof deposits.$inferInsert): Promise<DepositRow> {
      const [inserted] = await db.insert(deposits).values(row).returning()
      return inserted!
    },

    async update(id: string, patch: Partial<Omit<DepositRow, 'id' | 'userId' | 'createdAt'>>): Promise<DepositRow> {
      const [row] = await db.update(deposits).set(patch).where(eq(deposits.id, id)).returning()
      return row!
    },
  }
}
