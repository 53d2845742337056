import { afterAll, describe, expect, it } from 'vitest'
import { databaseBefore } from '../../../test/setup/migrations.ts'

const USER = '0190a000-0000-7000-8000-0000000000a1'
const REVENUE = '0190a000-0000-7000-8000-00000000f001'
const EXTERNAL = '0190a000-0000-7000-8000-00000000f002'

/** Spreading the platform accounts keeps each total and every entry where it was. */
describe('migration platform_sub_accounts', () => {
  const database = databaseBefore('0024_drop_webhook_events')
  const { client } = database
  afterAll(database.close)

  const transfer = (n: number, from: [string | null, string], to: [string | null, string], amount: number, type: string) =>
    client.query(
      `select moved from ledger_transfer(from_owner => $1, from_kind => $2, to_owner => $3, to_kind => $4, amount => $5, txn_id => $6, source_entry => $7, target_entry => $8,
        txn_type => $9, txn_description => 'before', for_order => null, for_payout => null, for_deposit => null, booked_at => '2026-01-01T10:00:00Z')`,
      [from[0], from[1], to[0], to[1], amount, `0190a000-0000-7000-8000-0000000001${n}0`, `0190a000-0000-7000-8000-0000000001${n}1`, `0190a000-0000-7000-8000-0000000001${n}2`, type],
    )

  it('keeps the existing accounts, balances and entries as sub-account 0, opens 1 to 15 at zero, and books the next transfers on any of them', async () => {
    await database.before()
    await client.query(`insert into users (id, email, username, password_hash, full_name, created_at, updated_at) values ($1, 'before@example.test', 'before', 'x', 'Before', now(), now())`, [USER])
    await client.query(`insert into ledger_accounts (id, owner_id, kind, balance_cents, created_at) values (gen_random_uuid(), $1, 'available', 0, now()), (gen_random_uuid(), $1, 'escrow', 0, now())`, [USER])
    expect((await transfer(1, [null, 'external'], [USER, 'available'], 10_000, 'deposit')).rows).toEqual([{ moved: true }])
    expect((await transfer(2, [USER, 'available'], [USER, 'escrow'], 3_000, 'order_payment')).rows).toEqual([{ moved: true }])
    expect((await transfer(3, [USER, 'escrow'], [null, 'revenue'], 300, 'order_earning')).rows).toEqual([{ moved: true }])

    await database.after()

    const platform = await client.query<{ kind: string; sub_account: number; id: string; balance: number; entries: number }>(
      `select a.kind, a.sub_account, a.id, a.balance_cents::int as balance, (select count(*)::int from ledger_entries e where e.account_id = a.id) as entries
       from ledger_accounts a where a.owner_id is null order by a.kind, a.sub_account`,
    )
    for (const kind of ['external', 'revenue']) {
      const parts = platform.rows.filter((row) => row.kind === kind)
      expect(parts.map((row) => row.sub_account)).toEqual(Array.from({ length: 16 }, (_, index) => index))
      expect(parts[0]).toMatchObject({ id: kind === 'revenue' ? REVENUE : EXTERNAL, balance: kind === 'revenue' ? 300 : -10_000, entries: 1 })
      for (const part of parts.slice(1)) expect(part).toMatchObject({ balance: 0, entries: 0 })
    }
    expect((await client.query('select sub_account from ledger_accounts where owner_id = $1', [USER])).rows).toEqual([{ sub_account: 0 }, { sub_account: 0 }])
    await expect(client.query(`update ledger_accounts set sub_account = 1 where owner_id = $1`, [USER])).rejects.toThrow(/ledger_accounts_sub_account_platform_only/)

    // The new function books a platform side on the sub-account it is given.
    await client.query(
      `select moved from ledger_transfer(from_owner => null, from_kind => 'external', to_owner => $1, to_kind => 'available', amount => 500, txn_id => gen_random_uuid(),
        source_entry => gen_random_uuid(), target_entry => gen_random_uuid(), txn_type => 'deposit', txn_description => 'after', for_order => null, for_payout => null,
        for_deposit => null, booked_at => now(), platform_sub_account => 7)`,
      [USER],
    )
    const totals = await client.query<{ kind: string; total: number; drift: number }>(
      `select a.kind, sum(a.balance_cents)::int as total, sum(a.balance_cents - coalesce((select sum(e.amount_cents) from ledger_entries e where e.account_id = a.id), 0))::int as drift
       from ledger_accounts a where a.owner_id is null group by a.kind order by a.kind`,
    )
    expect(totals.rows).toEqual([
      { kind: 'external', total: -10_500, drift: 0 },
      { kind: 'revenue', total: 300, drift: 0 },
    ])
    expect((await client.query(`select balance_cents::int as balance from ledger_accounts where owner_id is null and kind = 'external' and sub_account = 7`)).rows).toEqual([{ balance: -500 }])
  })
})
