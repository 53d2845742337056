import { and, asc, desc, eq, getTableColumns, inArray, lte } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { orderRequests, type NewOrderRequestRow, type OrderRequestRow } from './order-requests.table.ts'
import { orders, type OrderRow } from './orders.table.ts'

/** What closing a request writes. */
type Closing = Pick<OrderRequestRow, 'status' | 'respondedAt'>

export function createOrderRequestsRepository(db: Executor) {
  return {
    async insert(values: NewOrderRequestRow): Promise<OrderRequestRow> {
      const [row] = await db.insert(orderRequests).values(values).returning()
      return row!
    },

    async findById(id: string): Promise<OrderRequestRow | undefined> {
      const [row] = await db.select().from(orderRequests).where(eq(orderRequests.id, id))
      return row
    },

    /** One request of one order (a request id under another order is not found). */
    async findOfOrder(orderId: string, requestId: string): Promise<OrderRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(orderRequests)
        .where(and(eq(orderRequests.id, requestId), eq(orderRequests.orderId, orderId)))
      return row
    },

    async findOpen(orderId: string): Promise<OrderRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(orderRequests)
        .where(and(eq(orderRequests.orderId, orderId), eq(orderRequests.status, 'open')))
      return row
    },

    /** Closes the order's open request, if it has one, in one statement; answers it as closed. */
    async closeOpen(orderId: string, closing: Closing): Promise<OrderRequestRow | undefined> {
      const [row] = await db
        .update(orderRequests)
        .set(closing)
        .where(and(eq(orderRequests.orderId, orderId), eq(orderRequests.status, 'open')))
        .returning()
      return row
    },

    /** The requests of these orders, newest first. */
    listOf(orderIds: string[]): Promise<OrderRequestRow[]> {
      if (orderIds.length === 0) return Promise.resolve([])
      return db.select().from(orderRequests).where(inArray(orderRequests.orderId, orderIds)).orderBy(desc(orderRequests.createdAt), desc(orderRequests.id))
    },

    /**
     * Orders whose open request's time has passed, locked, the longest overdue first; orders
     * another worker or a move holds are skipped, so several workers settle each request once.
     */
    lockOrdersWithDueRequests(now: Date, limit: number): Promise<OrderRow[]> {
      return db
        .select(getTableColumns(orders))
        .from(orders)
        .innerJoin(orderRequests, and(eq(orderRequests.orderId, orders.id), eq(orderRequests.status, 'open')))
        .where(lte(orderRequests.expiresAt, now))
        .orderBy(asc(orderRequests.expiresAt))
        .limit(limit)
        .for('update', { of: orders, skipLocked: true })
    },
  }
}
