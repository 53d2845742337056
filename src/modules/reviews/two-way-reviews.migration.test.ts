import { afterAll, describe, expect, it } from 'vitest'
import { databaseBefore } from '../../../test/setup/migrations.ts'

const BUYER = '0190a000-0000-7000-8000-0000000000b1'
const SELLER = '0190a000-0000-7000-8000-0000000000b2'
const ORDER = '0190a000-0000-7000-8000-0000000000b3'
const REVIEW = '0190a000-0000-7000-8000-0000000000b4'

/** Reviews written before two-way reviews were the buyers', public at once: they stay so. */
describe('migration two_way_reviews', () => {
  const database = databaseBefore('0029_seller_level')
  const { client } = database
  afterAll(database.close)

  it('marks the existing reviews as the buyers’, about the seller, public since they were written, with the order’s completion', async () => {
    await database.before()
    for (const [id, name] of [
      [BUYER, 'buyer'],
      [SELLER, 'seller'],
    ]) {
      await client.query(`insert into users (id, email, username, password_hash, full_name, created_at, updated_at) values ($1, $2, $3, 'x', 'Someone', now(), now())`, [id, `${name}@example.test`, name])
    }
    await client.query(
      `insert into orders (id, buyer_id, seller_id, service_title, package_name, status, price_cents, extras, total_cents, platform_fee_cents, delivery_days, completed_at, created_at, updated_at)
       values ($1, $2, $3, 'Logo', 'Basic', 'completed', 10000, '[]', 10000, 1000, 3, '2026-01-02T10:00:00Z', '2026-01-01T10:00:00Z', '2026-01-02T10:00:00Z')`,
      [ORDER, BUYER, SELLER],
    )
    await client.query(`insert into reviews (id, order_id, seller_id, reviewer_id, rating, comment, created_at) values ($1, $2, $3, $4, 4, 'Good', '2026-01-03T10:00:00Z')`, [REVIEW, ORDER, SELLER, BUYER])

    await database.after()

    const [row] = (await client.query<Record<string, unknown>>(`select author_role, subject_id, published_at, order_completed_at from reviews where id = $1`, [REVIEW])).rows
    expect(row).toEqual({ author_role: 'buyer', subject_id: SELLER, published_at: new Date('2026-01-03T10:00:00Z'), order_completed_at: new Date('2026-01-02T10:00:00Z') })
    // The seller may now add theirs; a second buyer's review of the order is still refused.
    const insert = (id: string, role: string, reviewer: string, subject: string) =>
      client.query(`insert into reviews (id, order_id, seller_id, reviewer_id, author_role, subject_id, rating, order_completed_at, created_at) values ($1, $2, $3, $4, $5, $6, 5, now(), now())`, [id, ORDER, SELLER, reviewer, role, subject])
    await insert('0190a000-0000-7000-8000-0000000000b5', 'seller', SELLER, BUYER)
    await expect(insert('0190a000-0000-7000-8000-0000000000b6', 'buyer', BUYER, SELLER)).rejects.toThrow(/reviews_order_author_role_unique/)
  })
})
