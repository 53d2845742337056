import { sql, type SQL } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API, createTestApp, type TestContext } from '../../test/setup/test-app.ts'
import { rowsOf } from '../db/client.ts'
import { activityOptionsOf, seedActivity, type ActivitySeedResult } from './activity.ts'
import { seedBulk } from './bulk.ts'

const SERVICES = 200

describe('seeding activity for the bulk services', () => {
  let ctx: TestContext
  let result: ActivitySeedResult
  const rowsFrom = <T>(query: SQL): Promise<T[]> => rowsOf<T>(ctx.database.db, query)
  const one = async <T>(query: SQL): Promise<T> => (await rowsFrom<T>(query))[0]!

  beforeAll(async () => {
    ctx = await createTestApp()
    await seedBulk(ctx.database.db, SERVICES)
    result = await seedActivity(ctx.database.db, activityOptionsOf(ctx.config))
  })
  afterAll(() => ctx.close())

  it('generates one order per service, one buyer per four orders, a conversation of five messages on average per order', async () => {
    expect(result).toMatchObject({ orders: SERVICES, buyers: SERVICES / 4, messages: SERVICES * 5 })
    const counts = await one<Record<string, number>>(sql`select
      (select count(*)::int from orders) as orders,
      (select count(*)::int from users where email like '%@buyers.bulk.marketplace.test') as buyers,
      (select count(*)::int from conversations where order_id is not null) as conversations,
      (select count(*)::int from conversation_participants) as participants,
      (select count(*)::int from messages) as messages,
      (select count(*)::int from conversations c where c.last_seq <> (select count(*) from messages m where m.conversation_id = c.id)) as "wrongLastSeq"`)
    expect(counts).toEqual({ orders: SERVICES, buyers: SERVICES / 4, conversations: SERVICES, participants: SERVICES * 2, messages: SERVICES * 5, wrongLastSeq: 0 })
  })

  it('ends the orders older than 30 days and keeps the younger ones under way, with the dates of their moves', async () => {
    const rows = await rowsFrom<{ status: string; count: number; old: boolean; dated: boolean; delivered: boolean }>(sql`
      select status, count(*)::int as count,
             bool_and(created_at < now() - interval '30 days') as old,
             bool_and((completed_at is not null) = (status = 'completed') and (cancelled_at is not null) = (status = 'cancelled')) as dated,
             bool_and(status = 'pending' or status = 'cancelled' or exists (select 1 from order_deliveries d where d.order_id = o.id) or status = 'in_progress') as delivered
      from orders o group by status`)
    const by = Object.fromEntries(rows.map((row) => [row.status, row]))
    expect(by.completed!.count).toBeGreaterThan(by.cancelled!.count)
    expect(by.completed!.old && by.cancelled!.old).toBe(true)
    expect(rows.every((row) => row.dated && row.delivered)).toBe(true)
  })

  it('reviews only completed orders, and the kept ratings and order counts are those of the public reviews and completed orders', async () => {
    const figures = await one<Record<string, number | boolean>>(sql`select
      (select count(*)::int from reviews r join orders o on o.id = r.order_id where o.status <> 'completed') as "reviewsOfOpenOrders",
      (select count(*)::int from reviews) as reviews,
      (select coalesce(sum(reviews_count), 0)::int from seller_ratings) as "sellerRatings",
      (select count(*)::int from reviews where author_role = 'buyer' and published_at is not null) as "publicBuyerReviews",
      (select coalesce(sum(orders_count), 0)::int from services) as "servicesOrders",
      (select count(*)::int from orders where status = 'completed') as completed,
      (select coalesce(sum(rating_count), 0)::int from services) as "servicesRatings"`)
    expect(figures.reviewsOfOpenOrders).toBe(0)
    expect(figures.reviews).toBe(result.reviews)
    expect(figures.sellerRatings).toBe(figures.publicBuyerReviews)
    expect(figures.servicesRatings).toBe(figures.publicBuyerReviews)
    expect(figures.servicesOrders).toBe(figures.completed)
  })

  it('books every order in the ledger so that the reconciliation check finds no problem', async () => {
    const check = await ctx.app.container.wallet.checkLedger()
    expect(check.problems).toEqual([])
    expect(check.ok).toBe(true)
    expect(check.transactions).toBe(result.ledgerTransactions)
    const orphans = await one<{ unpaid: number; escrow: number; counted: number }>(sql`select
      (select count(*)::int from orders o where not exists (select 1 from ledger_transactions t where t.order_id = o.id and t.type = 'order_payment')) as unpaid,
      (select coalesce(sum(balance_cents), 0)::int from ledger_accounts where kind = 'escrow') as escrow,
      (select coalesce(sum(total_cents), 0)::int from orders where status not in ('completed', 'cancelled')) as counted`)
    expect(orphans.unpaid).toBe(0)
    expect(orphans.escrow).toBe(orphans.counted)
  })

  it('counts the admin statistics of the orders and the escrow as their triggers do', async () => {
    const counters = await rowsFrom<{ name: string; total: string }>(sql`
      select name, sum(delta)::bigint as total from stat_counter_deltas where name like 'orders.%' or name = 'wallet.escrow_held' group by name`)
    const truth = await rowsFrom<{ name: string; total: string }>(sql`
      select 'orders.' || status as name, count(*)::bigint as total from orders group by status
      union all select 'orders.gross_volume_cents', sum(total_cents)::bigint from orders where status = 'completed'
      union all select 'wallet.escrow_held', sum(balance_cents)::bigint from ledger_accounts where kind = 'escrow'`)
    const asMap = (rows: { name: string; total: string }[]) => Object.fromEntries(rows.map((row) => [row.name, Number(row.total)]))
    expect(asMap(counters)).toEqual(asMap(truth))
  })

  it("answers a seller's statistics from the seeded orders and ratings", async () => {
    const seller = await one<{ id: string; orders: number; completed: number }>(sql`
      select seller_id as id, count(*)::int as orders, (count(*) filter (where status = 'completed'))::int as completed from orders group by seller_id order by count(*) desc limit 1`)
    const response = await ctx.app.inject({ method: 'GET', url: `${API}/users/${seller.id}/stats` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ data: { totalOrders: seller.orders, completedOrders: seller.completed } })
  })

  it("keeps every seller's order figures as the orders and their first deliveries say", async () => {
    const sellers = await one<{ sellers: number; wrong: number }>(sql`
      select count(*)::int as sellers, (count(*) filter (where (coalesce(f.completed, 0), coalesce(f.cancelled, 0), coalesce(f.delivered, 0), coalesce(f.on_time, 0)) <> (c.completed, c.cancelled, c.delivered, c.on_time)))::int as wrong
      from (select o.seller_id, (count(*) filter (where o.status = 'completed'))::int as completed, (count(*) filter (where o.status = 'cancelled'))::int as cancelled,
                   (count(*) filter (where o.status <> 'disputed' and exists (select 1 from order_deliveries d where d.order_id = o.id)))::int as delivered,
                   (count(*) filter (where o.status <> 'disputed' and (select min(d.created_at) from order_deliveries d where d.order_id = o.id) <= o.due_at))::int as on_time
            from orders o group by o.seller_id) as c
      left join seller_order_figures f on f.seller_id = c.seller_id`)
    expect(sellers.sellers).toBeGreaterThan(0)
    expect(sellers.wrong).toBe(0)
    expect((await one<{ kept: number }>(sql`select count(*)::int as kept from seller_order_figures where delivered > 0`)).kept).toBeGreaterThan(0)
  })

  it('refuses to run again on the same database', async () => {
    await expect(seedActivity(ctx.database.db, activityOptionsOf(ctx.config))).rejects.toThrow(/seeded already/)
  })
})
