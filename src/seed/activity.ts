import { sql } from 'drizzle-orm'
import type { Config } from '../config.ts'
import { rowsOf, type Db, type Executor } from '../db/client.ts'
import { BULK_EMAIL_DOMAIN } from './bulk.ts'

/** Generated buyers end in this domain (not the sellers' one, which the catalogue bench reads as "bulk sellers"); they cannot log in. */
export const BULK_BUYER_DOMAIN = `buyers.${BULK_EMAIL_DOMAIN}`

/** Orders generated per statement batch: each batch is one transaction, so memory stays bounded. */
const BATCH = 50_000
/** One buyer for every this many orders (most buy once or twice, a few thousands of times). */
const ORDERS_PER_BUYER = 4
const DAY = 'interval \'1 day\''

/** The rules the app books by, taken from the configuration so the seeded books match the running app's. */
export interface ActivitySeedOptions {
  platformFeeBasisPoints: number
  clearanceAfterMs: number
  reviewWindowMs: number
  autoCompleteAfterMs: number
  notificationRetentionMs: number
  platformSubAccounts: number
  currency: string
}

/** The seeded money and windows follow the app's configuration, so the books and the worker agree with them. */
export const activityOptionsOf = (config: Config): ActivitySeedOptions => ({
  platformFeeBasisPoints: config.orders.platformFeeBasisPoints,
  clearanceAfterMs: config.clearanceAfterMs,
  reviewWindowMs: config.reviews.windowMs,
  autoCompleteAfterMs: config.orders.autoCompleteAfterMs,
  notificationRetentionMs: config.notifications.retentionMs,
  platformSubAccounts: config.ledgerPlatformSubAccounts,
  currency: config.currency,
})

export interface ActivitySeedResult {
  buyers: number
  orders: number
  messages: number
  reviews: number
  ledgerTransactions: number
  milliseconds: number
}

/** A UUID whose first 48 bits are the time `at` in milliseconds (as UUIDv7): rows inserted in time order append to their primary key instead of landing all over it. */
const idAt = (at: string) => sql.raw(`encode(overlay(uuid_send(gen_random_uuid()) placing substring(int8send((extract(epoch from ${at}) * 1000)::bigint) from 3) from 1 for 6), 'hex')::uuid`)
const ms = (value: number) => sql.raw(`(${Math.round(value)} * interval '1 millisecond')`)

const PHRASES = [
  'Hi! Thanks for the order, I will start today.',
  'Could you send me the brand colours and any examples you like?',
  'Here they are, plus two references.',
  'Got it. A first draft is on its way.',
  'Looks great, just one small change to the header please.',
  'Done, have a look at the new version.',
  'Perfect, thank you!',
]

/** The work tables live for one run, as ordinary (unlogged) tables: the pool may give each batch another connection, which a temporary table would not follow. */
async function createWorkTables(db: Db, subAccounts: number): Promise<void> {
  await dropWorkTables(db)
  await db.execute(sql`create unlogged table bulk_seed_services as
    select row_number() over (order by s.created_at, s.id)::int as n, s.id, s.seller_id, s.title, p.id as package_id, p.name as package_name,
           p.price_cents, p.delivery_days, p.revisions
    from services s join users u on u.id = s.seller_id
    join service_packages p on p.service_id = s.id and p.position = 0
    where u.email like ${`%@${BULK_EMAIL_DOMAIN}`} and s.status = 'active' and s.deleted_at is null`)
  await db.execute(sql`create unique index on bulk_seed_services (n)`)
  await db.execute(sql`create unlogged table bulk_seed_platform as
    select k.kind, p.part, ledger_platform_account(k.kind, p.part, now()) as id
    from (values ('revenue'), ('external')) as k(kind), generate_series(0, ${subAccounts - 1}::int) as p(part)`)
  await db.execute(sql`create unlogged table bulk_seed_batch (
    id uuid primary key, g int not null, buyer_id uuid not null, seller_id uuid not null, service_id uuid not null, package_id uuid not null,
    title text not null, package_name text not null, price_cents int not null, fee_cents int not null, delivery_days int not null, revisions int,
    status text not null, created_at timestamptz not null, accepted_at timestamptz, due_at timestamptz, delivered_at timestamptz,
    completed_at timestamptz, cancelled_at timestamptz, disputed_at timestamptz, auto_complete_at timestamptz, cleared_at timestamptz,
    last_at timestamptz not null, conversation_id uuid not null, messages int not null)`)
  await db.execute(sql`create unlogged table bulk_seed_moves (
    txn_id uuid not null, type text not null, description text not null, order_id uuid, deposit_id uuid,
    from_account uuid not null, to_account uuid not null, amount bigint not null, at timestamptz not null)`)
}

async function dropWorkTables(db: Db): Promise<void> {
  for (const table of ['bulk_seed_services', 'bulk_seed_buyers', 'bulk_seed_platform', 'bulk_seed_batch', 'bulk_seed_moves']) {
    await db.execute(sql.raw(`drop table if exists ${table}`))
  }
}

/** Buyers, with their four ledger accounts at zero, and the bulk sellers' accounts, which they lack until their first earning. */
async function createBuyers(db: Db, buyers: number): Promise<void> {
  for (let from = 1; from <= buyers; from += 50_000) {
    const to = Math.min(buyers, from + 49_999)
    await db.transaction(async (tx) => {
      await tx.execute(sql`
        insert into users (id, email, username, full_name, password_hash, is_active, title, description, activated_at, created_at, updated_at)
        select gen_random_uuid(), 'buyer' || g || '@' || ${BULK_BUYER_DOMAIN}, 'buyer_' || g, 'Bulk Buyer ' || g, '!', true, '', '',
               now() - interval '800 days', now() - interval '800 days', now()
        from generate_series(${from}::int, ${to}::int) as g`)
    })
  }
  await db.execute(sql`
    insert into ledger_accounts (id, owner_id, kind, balance_cents, created_at)
    select gen_random_uuid(), u.id, k.kind, 0, now()
    from users u, (values ('available'), ('escrow'), ('payout_pending'), ('clearing')) as k(kind)
    where u.email like ${`%@${BULK_BUYER_DOMAIN}`} or u.email like ${`%@${BULK_EMAIL_DOMAIN}`}
    on conflict do nothing`)
}

/**
 * One batch of orders, generated into `bulk_seed_batch`: order `g` of `total` is placed at its
 * share of the last two years (so batches follow one another in time), on a service and by a
 * buyer drawn with a skew (a few services and buyers have thousands of orders, most one or
 * none). Its status follows its age: older than 30 days it ended (completed, cancelled, or still
 * in dispute), younger it is under way.
 */
async function generateBatch(tx: Executor, from: number, to: number, total: number, services: number, buyers: number, options: ActivitySeedOptions): Promise<void> {
  await tx.execute(sql`truncate bulk_seed_batch`)
  await tx.execute(sql`
    with picked as (
      select g, now() - interval '730 days' + (g - random()) * (interval '730 days' - interval '1 hour') / ${total}::int as created_at,
             1 + floor(${services}::int * random() ^ 2)::int as service_n,
             1 + floor(${buyers}::int * random() ^ 3)::int as buyer_n,
             random() as r, random() as f
      from generate_series(${from}::int, ${to}::int) as g
    ),
    shaped as (
      select p.g, p.created_at, p.f, s.id as service_id, s.seller_id, s.title, s.package_id, s.package_name, s.price_cents, s.delivery_days, s.revisions, b.id as buyer_id,
             case when now() - p.created_at > interval '30 days' then case when p.r < 0.85 then 'completed' when p.r < 0.97 then 'cancelled' else 'disputed' end
                  when now() - p.created_at < interval '2 days' then case when p.r < 0.5 then 'pending' else 'in_progress' end
                  else case when p.r < 0.4 then 'in_progress' when p.r < 0.8 then 'delivered' else 'disputed' end end as status
      from picked p join bulk_seed_services s on s.n = p.service_n join bulk_seed_buyers b on b.n = p.buyer_n
    ),
    dated as (
      select shaped.*,
             case when status not in ('pending', 'cancelled') then created_at + interval '2 hours' end as accepted_at,
             case when status = 'delivered' then now() - f * interval '2 days'
                  when status in ('completed', 'disputed') then least(created_at + interval '2 hours' + delivery_days * (0.3 + f * 0.9) * ${sql.raw(DAY)}, now() - interval '3 hours') end as delivered_at
      from shaped
    ),
    ended as (
      select dated.*,
             case when status = 'completed' then delivered_at + interval '1 day' end as completed_at,
             case when status = 'cancelled' then created_at + interval '1 day' end as cancelled_at,
             case when status = 'disputed' then delivered_at + interval '1 hour' end as disputed_at
      from dated
    )
    insert into bulk_seed_batch
    select ${idAt('created_at')}, g, buyer_id, seller_id, service_id, package_id, title, package_name, price_cents,
           ((price_cents::bigint * ${options.platformFeeBasisPoints}::int + 5000) / 10000)::int, delivery_days, revisions, status, created_at,
           accepted_at, accepted_at + delivery_days * ${sql.raw(DAY)}, delivered_at, completed_at, cancelled_at, disputed_at,
           case when status = 'delivered' then delivered_at + ${ms(options.autoCompleteAfterMs)} end,
           case when completed_at + ${ms(options.clearanceAfterMs)} <= now() then completed_at + ${ms(options.clearanceAfterMs)} end,
           coalesce(completed_at, cancelled_at, disputed_at, delivered_at, accepted_at, created_at + interval '1 hour'),
           ${idAt('created_at')}, 3 + g % 5
    from ended`)
  // The planner needs the batch's size to pick hash joins over it.
  await tx.execute(sql`analyze bulk_seed_batch`)
}

/** The batch's orders as the app leaves them after their moves: the timeline, the dates, the delivery. */
async function insertOrders(tx: Executor): Promise<void> {
  const move = (action: string, status: string, by: string, reason: string | null, at: string) =>
    sql.raw(`(select to_jsonb(m) from (select '${action}' as action, '${status}' as status, '${by}' as by, ${reason === null ? 'null::text' : `'${reason}'`} as reason,
      to_char(${at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at) as m)`)
  await tx.execute(sql`
    insert into orders (id, buyer_id, seller_id, service_id, package_id, service_title, package_name, status, requirements, price_cents, extras, total_cents,
                        platform_fee_cents, delivery_days, revisions_left, status_reason, timeline, due_at, delivered_at, auto_complete_at, completed_at, cancelled_at,
                        created_at, updated_at)
    select id, buyer_id, seller_id, service_id, package_id, title, package_name, status, 'Please see the brief in the chat.', price_cents, '[]'::jsonb, price_cents,
           fee_cents, delivery_days, revisions,
           case status when 'cancelled' then 'Changed my mind' when 'disputed' then 'The delivery does not match the description' end,
           case when status = 'cancelled' then jsonb_build_array(${move('cancel', 'cancelled', 'buyer', 'Changed my mind', 'cancelled_at')})
                else '[]'::jsonb
                  || case when accepted_at is not null then jsonb_build_array(${move('accept', 'in_progress', 'seller', null, 'accepted_at')}) else '[]'::jsonb end
                  || case when delivered_at is not null then jsonb_build_array(${move('deliver', 'delivered', 'seller', null, 'delivered_at')}) else '[]'::jsonb end
                  || case when completed_at is not null then jsonb_build_array(${move('complete', 'completed', 'buyer', null, 'completed_at')}) else '[]'::jsonb end
                  || case when disputed_at is not null then jsonb_build_array(${move('dispute', 'disputed', 'buyer', 'The delivery does not match the description', 'disputed_at')}) else '[]'::jsonb end
           end,
           due_at, delivered_at, auto_complete_at, completed_at, cancelled_at, created_at, last_at
    from bulk_seed_batch order by id`)
  await tx.execute(sql`
    insert into order_deliveries (id, order_id, message, file_ids, created_at)
    select ${idAt('delivered_at')}, id, 'Here is the delivery: the files are in the chat.', '{}'::uuid[], delivered_at
    from bulk_seed_batch where delivered_at is not null order by id`)
}

/** Each order's conversation: 3 to 7 messages taking turns between buyer and seller, spread from placement to the order's last move; the party who did not send the last one has read it once the order ended. */
async function insertConversations(tx: Executor): Promise<void> {
  await tx.execute(sql`
    insert into conversations (id, order_id, last_seq, last_message_at, created_at)
    select conversation_id, id, messages, last_at, created_at from bulk_seed_batch order by conversation_id`)
  await tx.execute(sql`
    insert into conversation_participants (conversation_id, user_id, last_read_seq, unread_count, activity_at)
    select b.conversation_id, p.user_id, b.messages - p.unread, p.unread, b.last_at
    from bulk_seed_batch b
    cross join lateral (values
      (b.buyer_id, case when b.messages % 2 = 0 and b.status not in ('completed', 'cancelled') then 1 else 0 end),
      (b.seller_id, case when b.messages % 2 = 1 and b.status not in ('completed', 'cancelled') then 1 else 0 end)) as p(user_id, unread)`)
  await tx.execute(sql`
    insert into messages (id, conversation_id, seq, sender_id, content, created_at)
    select ${idAt('at')}, b.conversation_id, k, case when k % 2 = 1 then b.buyer_id else b.seller_id end,
           (${sql.raw(`array[${PHRASES.map((phrase) => `'${phrase.replace(/'/g, "''")}'`).join(', ')}]`)})[1 + (b.g + k) % ${PHRASES.length}::int], at
    from bulk_seed_batch b, generate_series(1, b.messages) as k,
         lateral (select b.created_at + (b.last_at - b.created_at) * k / b.messages as at) as t
    order by 1`)
}

/** Reviews of completed orders (three buyers in four, two sellers in five), public once the review window passed, as the worker publishes them. */
async function insertReviews(tx: Executor, options: ActivitySeedOptions): Promise<void> {
  await tx.execute(sql`
    insert into reviews (id, order_id, service_id, seller_id, reviewer_id, author_role, subject_id, rating, communication, quality, delivery, comment,
                         order_completed_at, published_at, created_at)
    select ${idAt('r.at')}, b.id, b.service_id, b.seller_id, case r.role when 'buyer' then b.buyer_id else b.seller_id end, r.role,
           case r.role when 'buyer' then b.seller_id else b.buyer_id end, r.rating,
           case when r.role = 'buyer' then r.rating end, case when r.role = 'buyer' then r.rating end, case when r.role = 'buyer' then greatest(1, r.rating - (b.g % 2)) end,
           case r.rating when 5 then 'Excellent work, fast and friendly.' when 4 then 'Good result, a little slow.' else 'Not what I hoped for.' end,
           b.completed_at,
           case when b.completed_at + ${ms(options.reviewWindowMs)} <= now() then b.completed_at + ${ms(options.reviewWindowMs)} end,
           r.at
    from bulk_seed_batch b
    cross join lateral (
      select 'buyer' as role, (array[5, 5, 5, 5, 5, 5, 4, 4, 4, 3, 2, 1])[1 + (b.g * 7) % 12] as rating, b.completed_at + ${ms(options.reviewWindowMs / 4)} as at where b.g % 4 <> 0
      union all
      select 'seller', (array[5, 5, 4])[1 + b.g % 3], b.completed_at + ${ms(options.reviewWindowMs / 3)} where b.g % 5 < 2) as r
    where b.status = 'completed'
    order by 1`)
}

/** What the parties were told within the retention window: the seller of each order placed, the buyer of each accepted, the seller of each completed. Read once the order is older than two days. */
async function insertNotifications(tx: Executor, options: ActivitySeedOptions): Promise<void> {
  await tx.execute(sql`
    insert into notifications (id, user_id, kind, link_type, link_id, data, read_at, created_at)
    select ${idAt('n.at')}, n.user_id, n.kind, 'order', b.id,
           (select to_jsonb(d) from (select b.id as "orderId", b.service_id as "serviceId", b.buyer_id as "buyerId", b.seller_id as "sellerId",
              round(b.price_cents / 100.0, 2) as total, 'buyer' as by) as d),
           case when n.at < now() - interval '2 days' then n.at + interval '1 hour' end, n.at
    from bulk_seed_batch b
    cross join lateral (values ('order.placed', b.seller_id, b.created_at), ('order.accepted', b.buyer_id, b.accepted_at), ('order.completed', b.seller_id, b.completed_at)) as n(kind, user_id, at)
    where n.at is not null and n.at > now() - ${ms(options.notificationRetentionMs)}
    order by 1`)
}

/**
 * The batch's money, booked as the app books it: a deposit per buyer (`external` -> available)
 * covering the batch's orders, then per order `order_payment` (available -> escrow) at placement;
 * on completion `order_earning` (escrow -> the seller's clearing, or available when clearance is
 * off) and the fee (escrow -> revenue), then `clearance` (clearing -> available) once
 * CLEARANCE_DAYS passed; on cancellation `order_refund` (escrow -> available). Each transaction's
 * two entries carry the running balance after them, continued from the account's balance before
 * the batch; the balances move by the same sums, so the reconciliation check finds nothing.
 */
async function bookMoney(tx: Executor, options: ActivitySeedOptions): Promise<void> {
  const parts = options.platformSubAccounts
  const earningTo = options.clearanceAfterMs === 0 ? 'sa.id' : 'sc.id'
  await tx.execute(sql`truncate bulk_seed_moves`)
  await tx.execute(sql`
    with per_buyer as (
      select buyer_id, sum(price_cents)::bigint as amount, min(created_at) - interval '1 minute' as at from bulk_seed_batch group by buyer_id
    ),
    deposited as (
      insert into deposits (id, user_id, amount_cents, currency, provider, status, created_at, completed_at)
      select ${idAt('at')}, buyer_id, amount, ${options.currency}, 'sandbox', 'succeeded', at, at from per_buyer
      returning id, user_id, amount_cents, created_at
    )
    insert into bulk_seed_moves (txn_id, type, description, deposit_id, from_account, to_account, amount, at)
    select ${idAt('d.created_at')}, 'deposit', 'Deposit via sandbox', d.id, ext.id, a.id, d.amount_cents, d.created_at
    from deposited d
    join ledger_accounts a on a.owner_id = d.user_id and a.kind = 'available'
    join bulk_seed_platform ext on ext.kind = 'external' and ext.part = abs(hashtext(d.id::text)) % ${parts}::int`)
  await tx.execute(sql`
    insert into bulk_seed_moves (txn_id, type, description, order_id, from_account, to_account, amount, at)
    select ${idAt('m.at')}, m.type, m.description, b.id, m.from_account, m.to_account, m.amount, m.at
    from bulk_seed_batch b
    join ledger_accounts ba on ba.owner_id = b.buyer_id and ba.kind = 'available'
    join ledger_accounts be on be.owner_id = b.buyer_id and be.kind = 'escrow'
    join ledger_accounts sc on sc.owner_id = b.seller_id and sc.kind = 'clearing'
    join ledger_accounts sa on sa.owner_id = b.seller_id and sa.kind = 'available'
    join bulk_seed_platform rev on rev.kind = 'revenue' and rev.part = b.g % ${parts}::int
    cross join lateral (values
      ('order_payment', 'Order: ' || b.title, ba.id, be.id, b.price_cents, b.created_at, true),
      ('order_earning', 'Earning: ' || b.title, be.id, ${sql.raw(earningTo)}, b.price_cents - b.fee_cents, b.completed_at, b.status = 'completed' and b.price_cents > b.fee_cents),
      ('order_earning', 'Platform fee: ' || b.title, be.id, rev.id, b.fee_cents, b.completed_at, b.status = 'completed' and b.fee_cents > 0),
      ('clearance', 'Cleared: Earning: ' || b.title, sc.id, sa.id, b.price_cents - b.fee_cents, b.cleared_at,
        ${options.clearanceAfterMs > 0} and b.cleared_at is not null and b.price_cents > b.fee_cents),
      ('order_refund', 'Refund: ' || b.title, be.id, ba.id, b.price_cents, b.cancelled_at, b.status = 'cancelled')
    ) as m(type, description, from_account, to_account, amount, at, wanted)
    where m.wanted`)
  await tx.execute(sql`analyze bulk_seed_moves`)
  await tx.execute(sql`
    insert into ledger_transactions (id, type, description, order_id, deposit_id, created_at)
    select txn_id, type, description, order_id, deposit_id, at from bulk_seed_moves order by txn_id`)
  await tx.execute(sql`
    with entries as (
      select m.txn_id, e.account_id, e.amount, m.at, e.side
      from bulk_seed_moves m cross join lateral (values (m.from_account, -m.amount, 0), (m.to_account, m.amount, 1)) as e(account_id, amount, side)
    )
    insert into ledger_entries (id, transaction_id, account_id, amount_cents, balance_after_cents, created_at)
    select ${idAt('e.at')}, e.txn_id, e.account_id, e.amount,
           a.balance_cents + sum(e.amount) over (partition by e.account_id order by e.at, e.txn_id, e.side rows unbounded preceding), e.at
    from entries e join ledger_accounts a on a.id = e.account_id
    order by 1`)
  // The batch runs without triggers (see `seedActivity`): the escrow and clearing statistics are counted here, as their triggers would.
  await tx.execute(sql`
    with moved as (
      select account_id, sum(amount) as delta from (
        select from_account as account_id, -amount as amount from bulk_seed_moves union all select to_account, amount from bulk_seed_moves) as entries
      group by account_id),
    updated as (
      update ledger_accounts a set balance_cents = a.balance_cents + moved.delta from moved
      where a.id = moved.account_id and moved.delta <> 0
      returning a.kind, moved.delta)
    select stat_count('wallet.' || kind || '_held', sum(delta)::bigint) from updated where kind in ('escrow', 'clearing') group by kind`)
  if (options.clearanceAfterMs > 0) {
    await tx.execute(sql`
      insert into clearances (id, user_id, order_id, amount_cents, reversed_cents, available_at, settled_at, credit_transaction_id, clearance_transaction_id, created_at)
      select ${idAt('e.at')}, b.seller_id, b.id, e.amount, 0, b.completed_at + ${ms(options.clearanceAfterMs)}, b.cleared_at, e.txn_id, c.txn_id, e.at
      from bulk_seed_batch b
      join bulk_seed_moves e on e.order_id = b.id and e.type = 'order_earning' and e.description like 'Earning: %'
      left join bulk_seed_moves c on c.order_id = b.id and c.type = 'clearance'
      order by 1`)
  }
}

/** The admin statistics of the batch's orders (by status, and the gross volume of the completed), as the orders trigger counts them. */
async function countOrders(tx: Executor): Promise<void> {
  await tx.execute(sql`select stat_count('orders.' || status, count(*)) from bulk_seed_batch group by status`)
  await tx.execute(sql`select stat_count('orders.gross_volume_cents', sum(price_cents)::bigint) from bulk_seed_batch where status = 'completed' having count(*) > 0`)
}

/**
 * The counters the app keeps beside the rows, recomputed from what was seeded: a service's
 * completed orders and public rating (the bulk seed's invented figures replaced), each seller's
 * and buyer's ratings from the public reviews they received, and each seller's order figures.
 */
async function recount(db: Db, services: number): Promise<void> {
  for (let from = 1; from <= services; from += 50_000) {
    await db.execute(sql`
      update services s set orders_count = x.completed, rating_count = x.reviews, rating_average = x.average
      from (
        select b.id,
               (select count(*)::int from orders o where o.service_id = b.id and o.status = 'completed') as completed,
               r.reviews, r.average
        from bulk_seed_services b
        cross join lateral (select count(*)::int as reviews, coalesce(avg(v.rating), 0)::float8 as average
          from reviews v where v.service_id = b.id and v.published_at is not null and v.author_role = 'buyer') as r
        where b.n between ${from}::int and ${from + 49_999}::int) as x
      where s.id = x.id and (s.orders_count, s.rating_count, s.rating_average) is distinct from (x.completed, x.reviews, x.average)`)
  }
  await db.execute(sql`
    insert into seller_ratings (seller_id, reviews_count, rating_sum, ones, twos, threes, fours, fives)
    select subject_id, count(*), sum(rating), count(*) filter (where rating = 1), count(*) filter (where rating = 2), count(*) filter (where rating = 3),
           count(*) filter (where rating = 4), count(*) filter (where rating = 5)
    from reviews where author_role = 'buyer' and published_at is not null group by subject_id
    on conflict (seller_id) do update set reviews_count = excluded.reviews_count, rating_sum = excluded.rating_sum, ones = excluded.ones, twos = excluded.twos,
      threes = excluded.threes, fours = excluded.fours, fives = excluded.fives`)
  await db.execute(sql`
    insert into seller_order_figures (seller_id, completed, cancelled, delivered, on_time)
    select o.seller_id, count(*) filter (where o.status = 'completed'), count(*) filter (where o.status = 'cancelled'),
           count(*) filter (where o.status <> 'disputed' and first_delivery.at is not null), count(*) filter (where o.status <> 'disputed' and first_delivery.at <= o.due_at)
    from orders o left join lateral (select min(d.created_at) as at from order_deliveries d where d.order_id = o.id) as first_delivery on true
    group by o.seller_id
    on conflict (seller_id) do update set completed = excluded.completed, cancelled = excluded.cancelled, delivered = excluded.delivered, on_time = excluded.on_time`)
  await db.execute(sql`
    insert into buyer_ratings (buyer_id, reviews_count, rating_sum)
    select subject_id, count(*), sum(rating) from reviews where author_role = 'seller' and published_at is not null group by subject_id
    on conflict (buyer_id) do update set reviews_count = excluded.reviews_count, rating_sum = excluded.rating_sum`)
}

const ANALYSED = ['users', 'services', 'orders', 'order_deliveries', 'conversations', 'conversation_participants', 'messages', 'reviews', 'notifications',
  'deposits', 'ledger_accounts', 'ledger_transactions', 'ledger_entries', 'clearances', 'seller_ratings', 'buyer_ratings', 'seller_order_figures', 'stat_counter_deltas']

/**
 * Orders with their conversations, messages, deliveries, reviews, notifications and money for
 * the bulk services (`seedBulk` first): about one order per service, five messages per order,
 * one buyer per four orders. Everything is generated by PostgreSQL (INSERT ... SELECT over
 * generate_series) in batches of 50,000 orders, one transaction each. Refuses to run on a
 * database that has the generated buyers already (the skew and the money are drawn for the whole
 * run at once, so there is nothing to top up).
 */
export async function seedActivity(db: Db, options: ActivitySeedOptions, log: (line: string) => void = () => undefined): Promise<ActivitySeedResult> {
  const started = performance.now()
  const [present] = await rowsOf<{ buyers: number }>(db, sql`select count(*)::int as buyers from users where email like ${`%@${BULK_BUYER_DOMAIN}`}`)
  if (Number(present?.buyers ?? 0) > 0) throw new Error(`activity is seeded already (${present!.buyers} generated buyers): seed a fresh database`)
  try {
    await createWorkTables(db, options.platformSubAccounts)
    const [{ services = 0 } = {}] = await rowsOf<{ services: number }>(db, sql`select count(*)::int as services from bulk_seed_services`)
    if (services === 0) throw new Error('no bulk services: seed them first (--services N)')
    const total = services
    const buyers = Math.ceil(total / ORDERS_PER_BUYER)
    await createBuyers(db, buyers)
    await db.execute(sql`create unlogged table bulk_seed_buyers as
      select substring(email from '^buyer([0-9]+)@')::int as n, id from users where email like ${`%@${BULK_BUYER_DOMAIN}`}`)
    await db.execute(sql`create unique index on bulk_seed_buyers (n)`)
    log(`  ${buyers} buyers`)
    for (let from = 1; from <= total; from += BATCH) {
      const to = Math.min(total, from + BATCH - 1)
      await db.transaction(async (tx) => {
        // Row triggers off for the batch (it needs a superuser): the rows are generated from the
        // rows their foreign keys name, so checking each reference one by one (about forty per
        // order) only halves the speed; the statistics the triggers would count are counted per
        // batch instead (countOrders, and bookMoney's balances).
        await tx.execute(sql`set local session_replication_role = replica`)
        await generateBatch(tx, from, to, total, services, buyers, options)
        await insertOrders(tx)
        await insertConversations(tx)
        await insertReviews(tx, options)
        await insertNotifications(tx, options)
        await bookMoney(tx, options)
        await countOrders(tx)
      })
      log(`  ${to} / ${total} orders (${((performance.now() - started) / 1000).toFixed(0)} s)`)
    }
    await recount(db, services)
    for (const table of ANALYSED) await db.execute(sql.raw(`vacuum (analyze) ${table}`))
    const [counts] = await rowsOf<{ messages: number; reviews: number; transactions: number }>(db, sql`
      select (select count(*)::int from messages) as messages, (select count(*)::int from reviews) as reviews, (select count(*)::int from ledger_transactions) as transactions`)
    return { buyers, orders: total, messages: counts!.messages, reviews: counts!.reviews, ledgerTransactions: counts!.transactions, milliseconds: Math.round(performance.now() - started) }
  } finally {
    await dropWorkTables(db)
  }
}
