import { and, asc, count, desc, eq, inArray, lte, sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { openStatuses, type OrderStatus } from './order-status.ts'
import { orderDeliveries, orders, type NewOrderRow, type OrderDeliveryRow, type OrderRow } from './orders.table.ts'

export interface OrderFilter {
  status?: OrderStatus
  buyerId?: string
  sellerId?: string
}

export function createOrdersRepository(db: Executor) {
  const whereOf = (filter: OrderFilter): SQL | undefined => {
    const conditions: SQL[] = []
    if (filter.status) conditions.push(eq(orders.status, filter.status))
    if (filter.buyerId) conditions.push(eq(orders.buyerId, filter.buyerId))
    if (filter.sellerId) conditions.push(eq(orders.sellerId, filter.sellerId))
    return conditions.length > 0 ? and(...conditions) : undefined
  }

  return {
    async insert(row: NewOrderRow): Promise<OrderRow> {
      const [inserted] = await db.insert(orders).values(row).returning()
      return inserted!
    },

    async findById(id: string): Promise<OrderRow | undefined> {
      const [row] = await db.select().from(orders).where(eq(orders.id, id))
      return row
    },

    async lockById(id: string): Promise<OrderRow | undefined> {
      const [row] = await db.select().from(orders).where(eq(orders.id, id)).for('update')
      return row
    },

    async update(id: string, patch: Partial<Omit<NewOrderRow, 'id' | 'buyerId' | 'sellerId' | 'serviceId' | 'createdAt'>>): Promise<OrderRow> {
      const [row] = await db.update(orders).set(patch).where(eq(orders.id, id)).returning()
      return row!
    },

    /** Newest first. */
    async list(filter: OrderFilter, offset: number, limit: number): Promise<{ rows: OrderRow[]; total: number }> {
      const where = whereOf(filter)
      const [rows, [counted]] = await Promise.all([
        db.select().from(orders).where(where).orderBy(desc(orders.createdAt), desc(orders.id)).offset(offset).limit(limit),
        db.select({ total: count() }).from(orders).where(where),
      ])
      return { rows, total: counted?.total ?? 0 }
    },

    async countOpenForService(serviceId: string): Promise<number> {
      const [row] = await db
        .select({ total: count() })
        .from(orders)
        .where(and(eq(orders.serviceId, serviceId), inArray(orders.status, [...openStatuses])))
      return row?.total ?? 0
    },

    /**
     * Delivered orders due for auto-completion, locked; rows another worker holds are skipped, so
     * several workers share the work and never complete one order twice.
     */
    lockDueForAutoComplete(now: Date, limit: number): Promise<OrderRow[]> {
      return db
        .select()
        .from(orders)
        .where(and(eq(orders.status, 'delivered'), lte(orders.autoCompleteAt, now)))
        .orderBy(asc(orders.autoCompleteAt))
        .limit(limit)
        .for('update', { skipLocked: true })
    },

    async insertDelivery(row: typeof orderDeliveries.$inferInsert): Promise<OrderDeliveryRow> {
      const [inserted] = await db.insert(orderDeliveries).values(row).returning()
      return inserted!
    },

    deliveriesOf(orderIds: string[]): Promise<OrderDeliveryRow[]> {
      if (orderIds.length === 0) return Promise.resolve([])
      return db.select().from(orderDeliveries).where(inArray(orderDeliveries.orderId, orderIds)).orderBy(asc(orderDeliveries.createdAt), asc(orderDeliveries.id))
    },

    /** Seller statistics: orders by status, one grouped query. */
    async countBySellerAndStatus(sellerId: string): Promise<Map<OrderStatus, number>> {
      const rows = await db
        .select({ status: orders.status, total: sql<number>`count(*)::int` })
        .from(orders)
        .where(eq(orders.sellerId, sellerId))
        .groupBy(orders.status)
      return new Map(rows.map((row) => [row.status, Number(row.total)]))
    },
  }
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>
