import { afterAll, describe, expect, it } from 'vitest'
import { databaseBefore } from '../../../test/setup/migrations.ts'

const SELLER = '0190a000-0000-7000-8000-0000000000b1'
const QUIET = '0190a000-0000-7000-8000-0000000000b2'
const BUYER = '0190a000-0000-7000-8000-0000000000b3'

/** The kept figures start from the orders there were, and the triggers go on from there. */
describe('migration seller_order_figures', () => {
  const database = databaseBefore('0036_catalogue_plans_without_jit')
  const { client } = database
  afterAll(database.close)

  const user = (id: string, name: string) =>
    client.query(`insert into users (id, email, username, password_hash, full_name, created_at, updated_at) values ($1, $2, $3, 'x', $3, now(), now())`, [id, `${name}@example.test`, name])
  /** An order of SELLER's, `status`, due at `due` (null: not started), first delivered at `delivered` (null: never). */
  async function order(n: number, status: string, due: string | null, delivered: string | null) {
    const id = `0190a000-0000-7000-8000-0000000002${String(n).padStart(2, '0')}`
    await client.query(
      `insert into orders (id, buyer_id, seller_id, service_title, package_name, status, price_cents, extras, total_cents, platform_fee_cents, delivery_days, due_at, created_at, updated_at)
       values ($1, $2, $3, 'Logo', 'Basic', $4, 10000, '[]', 10000, 1000, 3, $5, '2026-01-01T10:00:00Z', '2026-01-01T10:00:00Z')`,
      [id, BUYER, SELLER, status, due],
    )
    if (delivered) {
      // A second, later delivery: the first one decides.
      await client.query(`insert into order_deliveries (id, order_id, message, file_ids, created_at) values (gen_random_uuid(), $1, 'first', '{}', $2), (gen_random_uuid(), $1, 'again', '{}', $2::timestamptz + interval '9 days')`, [id, delivered])
    }
    return id
  }
  const figures = async () =>
    (await client.query(`select seller_id as "sellerId", completed, cancelled, delivered, on_time as "onTime" from seller_order_figures order by seller_id`)).rows

  it('counts the ended and delivered orders there were (none for a seller whose orders are all open), then follows each change', async () => {
    await database.before()
    await user(SELLER, 'seller')
    await user(QUIET, 'quiet')
    await user(BUYER, 'buyer')
    await order(1, 'pending', null, null)
    await client.query(`insert into orders (id, buyer_id, seller_id, service_title, package_name, status, price_cents, extras, total_cents, platform_fee_cents, delivery_days, created_at, updated_at)
      values (gen_random_uuid(), $1, $2, 'Logo', 'Basic', 'in_progress', 10000, '[]', 10000, 1000, 3, now(), now())`, [BUYER, QUIET])
    await order(2, 'completed', '2026-01-04T10:00:00Z', '2026-01-03T10:00:00Z')
    await order(3, 'completed', '2026-01-04T10:00:00Z', '2026-01-05T10:00:00Z')
    const disputed = await order(4, 'disputed', '2026-01-04T10:00:00Z', '2026-01-02T10:00:00Z')
    await order(5, 'cancelled', null, null)
    const delivered = await order(6, 'delivered', '2026-01-04T10:00:00Z', '2026-01-04T10:00:00Z')

    await database.after()
    expect(await figures()).toEqual([{ sellerId: SELLER, completed: 2, cancelled: 1, delivered: 3, onTime: 2 }])

    // Out of dispute: delivered (and on time) again; a completion; a new order with its first delivery.
    await client.query(`update orders set status = 'completed' where id = $1`, [disputed])
    await client.query(`update orders set status = 'completed' where id = $1`, [delivered])
    const started = await order(7, 'in_progress', '2026-01-04T10:00:00Z', null)
    await client.query(`insert into order_deliveries (id, order_id, message, file_ids, created_at) values (gen_random_uuid(), $1, 'late', '{}', '2026-01-06T10:00:00Z')`, [started])
    expect(await figures()).toEqual([{ sellerId: SELLER, completed: 4, cancelled: 1, delivered: 5, onTime: 3 }])

    // Two deliveries in one statement count the order once, on time by the earlier; a delivery
    // dated before the order's first one (another instance's clock) makes the late order on time.
    const twice = await order(8, 'in_progress', '2026-01-04T10:00:00Z', null)
    await client.query(
      `insert into order_deliveries (id, order_id, message, file_ids, created_at) values (gen_random_uuid(), $1, 'a', '{}', '2026-01-06T10:00:00Z'), (gen_random_uuid(), $1, 'b', '{}', '2026-01-03T10:00:00Z')`,
      [twice],
    )
    expect(await figures()).toEqual([{ sellerId: SELLER, completed: 4, cancelled: 1, delivered: 6, onTime: 4 }])
    await client.query(`insert into order_deliveries (id, order_id, message, file_ids, created_at) values (gen_random_uuid(), $1, 'earlier', '{}', '2026-01-02T10:00:00Z')`, [started])
    expect(await figures()).toEqual([{ sellerId: SELLER, completed: 4, cancelled: 1, delivered: 6, onTime: 5 }])
  })
})
