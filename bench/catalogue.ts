/**
 * `npm run bench [-- --duration 3 --rounds 3 --connections 100 --search-connections 10 --storm 5 --online 100 --only <words>]`
 * (`--only` keeps the routes whose name contains the words; `--storm 0` skips the login storm;
 * `--online` is how many bulk sellers have a chat socket open during the run)
 *
 * The catalogue's read routes side by side with a bare Fastify 5 + `pg` server that answers the
 * same JSON with the best SQL we can write for it (one prepared statement per answer, written for
 * that answer's filters alone, JSON built by PostgreSQL, counts kept by the triggers, search
 * ranking a bounded candidate set and correcting a misspelt search in the same statement, the
 * category tree kept in memory for 5 seconds, the sellers online read from the same realtime hub
 * and kept for a second). Both
 * servers listen on 127.0.0.1 in this process; the load comes from a separate process
 * (bench/load-worker.ts) over loopback HTTP with keep-alive. Each route is run on both sides,
 * interleaved (project first in odd rounds, bare first in even ones), for `--rounds` rounds of
 * `--duration` seconds. Beside each side's req/s it prints the servers' process CPU time per request
 * (both servers share the process and only one is loaded at a time): on a shared host, where
 * req/s moves with the neighbours, the CPU a request costs moves far less. With a local
 * PostgreSQL it prints the database processes' CPU per request as well. Then a login storm: POST /auth/login at full tilt while
 * GET /services/{id} is measured, with argon2 bounded (PASSWORD_HASH_CONCURRENCY) and unbounded.
 *
 * PostgreSQL when DATABASE_URL is set (the bare server gets its own pool of the same size), the
 * embedded PGlite under DATA_DIR otherwise (both servers share the one PGlite connection). Seed
 * first: `npm run seed -- --services 100000`. Results go to bench/results/ as JSON and Markdown.
 * Before measuring, each bare answer is compared with the project's: a route whose answers
 * differ is reported as such.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, totalmem } from 'node:os'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import Fastify from 'fastify'
import pg from 'pg'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'
import { runMigrations } from '../src/db/migrate.ts'
import { defaultHashConcurrency, hashPassword, limitPasswordHashing } from '../src/lib/passwords.ts'
import { API_PREFIX } from '../src/http/prefix.ts'
import { createRealtimeHub } from '../src/platform/realtime/create-hub.ts'
import type { HubSocket } from '../src/platform/realtime/realtime.ts'
import pino from 'pino'
import { databaseCpu, databaseCpuSince } from './support/database-cpu.ts'
import { catalogueRoutes, catalogueSample, loader, median, type Run } from './catalogue-routes.ts'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '100' },
    'search-connections': { type: 'string', default: '10' },
    storm: { type: 'string', default: '5' },
    online: { type: 'string', default: '100' },
    only: { type: 'string' },
  },
})
const durationMs = Number(values.duration) * 1000
const rounds = Number(values.rounds)
const connections = Number(values.connections)
const searchConnections = Number(values['search-connections'])
const stormMs = Number(values.storm) * 1000
const onlineSellers = Number(values.online)
if (![durationMs, rounds, connections, searchConnections].every((value) => Number.isFinite(value) && value > 0) || rounds < 1 || !(stormMs >= 0) || !(Number.isSafeInteger(onlineSellers) && onlineSellers >= 0)) {
  console.error('--duration, --rounds, --connections and --search-connections must be positive numbers, --storm and --online zero or more')
  process.exit(2)
}

const loaded = loadConfig()
// Rate limits would answer 429; the worker has no part in reads. Measured as deployed:
// `isProduction` also drops the development guard around the database handle.
const config = {
  ...loaded,
  rateLimit: { ...loaded.rateLimit, general: 100_000_000, auth: 100_000_000 },
  runWorker: false,
  logLevel: 'error' as const,
  isProduction: true,
}
const database = await openDatabase(config.database)
await runMigrations(database)
// One hub for both servers: the project's presence filter and the bare twin read the same sellers online.
const realtime = createRealtimeHub({ redisUrl: config.redisUrl, ...config.realtime, logger: pino({ level: 'silent' }) })
const app = await buildApp({ config, database, realtime })
await app.listen({ host: '127.0.0.1', port: 0 })
const projectBase = `http://127.0.0.1:${(app.server.address() as { port: number }).port}${API_PREFIX}`

// One query runner for the bare server: its own pg pool, or the shared PGlite.
let run: Run
let closeBare = async () => undefined as void
if (database.kind === 'postgres') {
  const pool = new pg.Pool({ connectionString: config.database.kind === 'postgres' ? config.database.url : '', max: 10 })
  run = (name, text, params) => pool.query({ name, text, values: params })
  closeBare = () => pool.end()
} else {
  const client = database.client
  run = (_name, text, params) => client.query(text, params)
}

const filesBase = `${config.publicUrl}${API_PREFIX}/uploads/`
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
const fileUrl = (objectType: string, objectId: string, tag: string) =>
  `(select $FILES || f.path from uploads f where f.object_type = '${objectType}' and f.object_id = ${objectId} and f.tag = '${tag}' order by f."order" limit 1)`
const money = (cents: string) => `round(${cents} / 100.0, 2)`
const cursorOf = (json: string) => `rtrim(translate(replace(encode(convert_to(${json}, 'UTF8'), 'base64'), E'\\n', ''), '+/', '-_'), '=')`
const summary = (s: string) => `json_build_object(
  'id', ${s}.id, 'title', ${s}.title, 'shortDescription', ${s}.short_description,
  'startingPrice', ${money(`${s}.starting_price_cents`)},
  'rating', json_build_object('average', ${s}.rating_average, 'count', ${s}.rating_count),
  'ordersCount', ${s}.orders_count, 'createdAt', ${iso(`${s}.created_at`)},
  'banner', ${fileUrl('service', `${s}.id`, 'service_banner')},
  'seller', (select json_build_object('id', u.id, 'fullName', u.full_name, 'username', u.username, 'avatar', ${fileUrl('user', 'u.id', 'avatar')}) from users u where u.id = ${s}.seller_id),
  'sellerLevel', (select u.seller_level from users u where u.id = ${s}.seller_id),
  'category', (select json_build_object('id', c.id, 'name', c.name, 'slug', c.slug) from categories c where c.id = ${s}.category_id))`

/**
 * The first page (20) of the catalogue newest first under `condition` on services `s`, counted up
 * to 1,001. With `sellers` (a select of the sellers the condition narrows to), their matching
 * services are read first, seller by seller; the page is sorted from them when that is all of
 * them, walked from the date's index otherwise.
 */
const newestWhere = (condition: string, sellers?: string) => {
  const live = `s.status = 'active' and s.deleted_at is null and ${condition}`
  const walked = `select s.id, s.created_at from services s where ${live} order by s.created_at desc, s.id desc limit 21`
  const ctes =
    sellers === undefined
      ? `page as (${walked}),
    counted as (select count(*)::int as total from (select 1 from services s where ${live} limit 1001) as c)`
      : `matched as (select s.id, s.created_at from (${sellers}) as seller(id) join services s on s.seller_id = seller.id where ${live} limit 1001),
    counted as (select count(*)::int as total from matched),
    page as ((select id, created_at from matched where (select total from counted) <= 1000 order by created_at desc, id desc limit 21)
      union all (select w.* from (${walked}) as w where (select total from counted) > 1000))`
  return `
    with ${ctes},
    shown as (select s.* from (select * from page order by created_at desc, id desc limit 20) as first join services s on s.id = first.id)
    select json_build_object('success', true, 'data', json_build_object(
      'items', coalesce((select json_agg(${summary('shown')} order by shown.created_at desc, shown.id desc) from shown), '[]'::json),
      'pagination', json_build_object('page', 1, 'limit', 20, 'total', least(counted.total, 1000), 'pages', ceil(least(counted.total, 1000) / 20.0)::int,
        'hasNext', (select count(*) from page) > 20, 'hasPrev', false, 'totalIsExact', counted.total <= 1000,
        'nextCursor', case when (select count(*) from page) > 20
          then ${cursorOf(`'{"sortBy":"createdAt","sortOrder":"desc","id":"' || (select id from shown order by created_at, id limit 1) || '"}'`)} end)))::text as body
    from counted`
}

/**
 * A search by relevance: at most 1,001 candidates by ts_rank, the best 100 re-ranked with the
 * title's word similarity, the query parsed once per execution (a sub-select); when the words as
 * typed match fewer than three services, the candidates of the words corrected by the lexicon
 * (the database function the project's statement calls) instead, in the same statement.
 */
const searchCtes = `
    first as (
      select s.id, s.title, ts_rank(s.search_vector, (select websearch_to_tsquery('english', $1))) as cheap, s.category_id, s.starting_price_cents, s.starting_delivery_days, s.seller_id
      from services s where s.status = 'active' and s.deleted_at is null and s.search_vector @@ (select websearch_to_tsquery('english', $1)) limit 1001),
    fix as (select catalogue_search_correction($1) as q where (select count(*) from first) < 3),
    again as (
      select s.id, s.title, ts_rank(s.search_vector, (select websearch_to_tsquery('english', $1) || q from fix)) as cheap, s.category_id, s.starting_price_cents, s.starting_delivery_days, s.seller_id
      from services s where (select q from fix) is not null and s.status = 'active' and s.deleted_at is null
        and s.search_vector @@ (select websearch_to_tsquery('english', $1) || q from fix) limit 1001),
    candidates as (select * from first where (select q from fix) is null union all select * from again),
    best as (select id, cheap + word_similarity(lower($1), lower(title)) as rank from (select * from candidates order by cheap desc, id desc limit 100) as top),
    ranked as (
      select candidates.id, (best.id is not null) as reranked, coalesce(best.rank, candidates.cheap) as rank
      from candidates left join best on best.id = candidates.id order by reranked desc, rank desc, candidates.id desc limit 21),
    shown as (select s.*, ranked.reranked, ranked.rank from ranked join services s on s.id = ranked.id order by ranked.reranked desc, ranked.rank desc, s.id desc limit 20),
    counted as (select count(*)::int as total from candidates)`
const searchPage = (facets: string) => `
    select json_build_object('success', true, 'data', json_build_object(
      'items', coalesce((select json_agg(${summary('shown')} order by shown.reranked desc, shown.rank desc, shown.id desc) from shown), '[]'::json),
      'pagination', json_build_object('page', 1, 'limit', 20, 'total', least(counted.total, 1000), 'pages', ceil(least(counted.total, 1000) / 20.0)::int,
        'hasNext', (select count(*) from ranked) > 20, 'hasPrev', false, 'totalIsExact', counted.total <= 1000,
        'nextCursor', case when (select count(*) from ranked) > 20 then ${cursorOf(`'{"sortBy":"relevance","sortOrder":"desc","offset":20}'`)} end)${facets}))::text as body
    from counted`

/** The facets of a search without filters: the first 1,000 candidates per category, band and level; each band and level counted in one pass, the few sellers above `new` hashed. */
const searchFacets = `,
      'facets', json_build_object(
        'categories', coalesce((select json_agg(json_build_object('key', f.key, 'parent', f.parent, 'count', f.count) order by f.count desc, f.key) from (
          select k.slug as key, kp.slug as parent, sum(x.n)::int as count
          from (select category_id, count(*) as n from (select category_id from candidates limit 1000) as first group by category_id) as x
          join categories c on c.id = x.category_id
          cross join lateral (values (c.id), (c.parent_id)) as hit(id) join categories k on k.id = hit.id left join categories kp on kp.id = k.parent_id
          group by k.slug, kp.slug) as f), '[]'::json),
        'priceBands', (select json_build_array(
            json_build_object('key', '0-25', 'from', 0.00, 'to', 24.99, 'count', count(*) filter (where x.price between 0 and 2499)),
            json_build_object('key', '25-50', 'from', 25.00, 'to', 49.99, 'count', count(*) filter (where x.price between 2500 and 4999)),
            json_build_object('key', '50-100', 'from', 50.00, 'to', 99.99, 'count', count(*) filter (where x.price between 5000 and 9999)),
            json_build_object('key', '100-250', 'from', 100.00, 'to', 249.99, 'count', count(*) filter (where x.price between 10000 and 24999)),
            json_build_object('key', '250-500', 'from', 250.00, 'to', 499.99, 'count', count(*) filter (where x.price between 25000 and 49999)),
            json_build_object('key', '500+', 'from', 500.00, 'to', null, 'count', count(*) filter (where x.price >= 50000)))
          from (select starting_price_cents as price from candidates limit 1000) as x),
        'deliveryBands', (select json_build_array(
            json_build_object('key', '1', 'from', 1, 'to', 1, 'count', count(*) filter (where x.days = 1)),
            json_build_object('key', '2-3', 'from', 2, 'to', 3, 'count', count(*) filter (where x.days between 2 and 3)),
            json_build_object('key', '4-7', 'from', 4, 'to', 7, 'count', count(*) filter (where x.days between 4 and 7)),
            json_build_object('key', '8+', 'from', 8, 'to', null, 'count', count(*) filter (where x.days >= 8)))
          from (select starting_delivery_days as days from candidates limit 1000) as x),
        'sellerLevels', (select json_build_array(
            json_build_object('key', 'new', 'count', count(*) filter (where u.seller_level is null)),
            json_build_object('key', 'level_one', 'count', count(*) filter (where u.seller_level = 'level_one')),
            json_build_object('key', 'level_two', 'count', count(*) filter (where u.seller_level = 'level_two')),
            json_build_object('key', 'top_rated', 'count', count(*) filter (where u.seller_level = 'top_rated')))
          from (select seller_id from candidates limit 1000) as x
          left join (select id, seller_level from users where seller_level <> 'new') as u on u.id = x.seller_id),
        'countsAreExact', counted.total <= 1000)`

/** The bare statements; `$FILES` is the uploads base URL, always the last parameter. */
const BARE_SQL = {
  service: `
    select json_build_object('success', true, 'data', json_build_object(
      'id', s.id, 'title', s.title, 'shortDescription', s.short_description, 'description', s.description, 'tags', s.tags,
      'status', s.status, 'rejectionReason', null,
      'category', json_build_object('id', c.id, 'name', c.name, 'slug', c.slug),
      'seller', json_build_object('id', u.id, 'fullName', u.full_name, 'username', u.username, 'avatar', ${fileUrl('user', 'u.id', 'avatar')}),
      'sellerLevel', u.seller_level,
      'packages', coalesce((select json_agg(json_build_object('id', p.id, 'name', p.name, 'description', p.description, 'price', ${money('p.price_cents')},
          'deliveryDays', p.delivery_days, 'revisions', coalesce(to_json(p.revisions), '"unlimited"'::json), 'features', p.features) order by p.position)
        from service_packages p where p.service_id = s.id), '[]'::json),
      'extras', coalesce((select json_agg(json_build_object('id', e.id, 'title', e.title, 'price', ${money('e.price_cents')}, 'additionalDays', e.additional_days) order by e.position)
        from service_extras e where e.service_id = s.id), '[]'::json),
      'banner', ${fileUrl('service', 's.id', 'service_banner')},
      'images', coalesce((select json_agg(json_build_object('id', f.id, 'url', $FILES || f.path, 'order', f."order") order by f."order")
        from uploads f where f.object_type = 'service' and f.object_id = s.id and f.tag = 'service_gallery'), '[]'::json),
      'startingPrice', ${money('s.starting_price_cents')},
      'rating', json_build_object('average', s.rating_average, 'count', s.rating_count),
      'ordersCount', s.orders_count, 'savedCount', s.saved_count, 'saved', false, 'createdAt', ${iso('s.created_at')}, 'updatedAt', ${iso('s.updated_at')}))::text as body
    from services s join categories c on c.id = s.category_id join users u on u.id = s.seller_id
    where s.id = $1 and s.status = 'active' and s.deleted_at is null`,

  // The category by slug and its subcategories; a page of 20 by price, the total from the kept counts.
  categoryByPrice: `
    with wanted as (select array_agg(id) as ids from categories where slug = $1 or parent_id = (select id from categories where slug = $1)),
    page as (
      select s.* from services s
      where s.category_id = any((select ids from wanted)::uuid[]) and s.status = 'active' and s.deleted_at is null
      order by s.starting_price_cents, s.id limit 21),
    total as (select coalesce(sum(active_services), 0)::int as total from category_service_counts where category_id = any((select ids from wanted)::uuid[])),
    shown as (select * from page order by starting_price_cents, id limit 20)
    select json_build_object('success', true, 'data', json_build_object(
      'items', coalesce((select json_agg(${summary('shown')} order by shown.starting_price_cents, shown.id) from shown), '[]'::json),
      'pagination', json_build_object('page', 1, 'limit', 20, 'total', total.total, 'pages', ceil(total.total / 20.0)::int,
        'hasNext', (select count(*) from page) > 20, 'hasPrev', false, 'totalIsExact', true,
        'nextCursor', case when (select count(*) from page) > 20
          then ${cursorOf(`'{"sortBy":"price","sortOrder":"asc","id":"' || (select id from shown order by starting_price_cents desc, id desc limit 1) || '"}'`)} end)))::text as body
    from total`,

  search: `with ${searchCtes} ${searchPage('')}`,
  facetedSearch: `with ${searchCtes} ${searchPage(searchFacets)}`,
  deliveryDays: newestWhere('s.starting_delivery_days <= $1'),
  minRating: newestWhere('s.rating_average >= $1'),
  // The levels of the bench's request are above `new`: users at them are sellers, found by the partial index.
  sellerLevel: newestWhere(
    's.seller_id in (select u.id from users u where u.seller_level = any($1::text[]))',
    `select u.id from users u where u.seller_level = any($1::text[]) and u.seller_level <> 'new'`,
  ),
  sellerOnline: newestWhere('s.seller_id = any($1::uuid[])', 'select distinct unnest($1::uuid[])'),
  tags: newestWhere('s.tags && $1::text[]'),
  onlineSellers: `select u.id from unnest($1::uuid[]) as u(id) where exists (select 1 from services s where s.seller_id = u.id and s.status = 'active' and s.deleted_at is null)`,

  categories: `
    select json_build_object('success', true, 'data', coalesce(json_agg(node order by position, name, id), '[]'::json))::text as body from (
      select p.position, p.name, p.id, json_build_object('id', p.id, 'name', p.name, 'slug', p.slug, 'description', p.description, 'parentId', null, 'position', p.position,
        'servicesCount', coalesce(pc.active_services, 0) + coalesce((select sum(cc.active_services) from categories ch join category_service_counts cc on cc.category_id = ch.id where ch.parent_id = p.id), 0),
        'subcategories', coalesce((select json_agg(json_build_object('id', ch.id, 'name', ch.name, 'slug', ch.slug, 'description', ch.description, 'parentId', ch.parent_id,
            'position', ch.position, 'servicesCount', coalesce(cc.active_services, 0)) order by ch.position, ch.name, ch.id)
          from categories ch left join category_service_counts cc on cc.category_id = ch.id where ch.parent_id = p.id), '[]'::json)) as node
      from categories p left join category_service_counts pc on pc.category_id = p.id where p.parent_id is null) as tree`,
}

/** `$FILES` becomes the statement's last parameter. */
function prepare(name: keyof typeof BARE_SQL, params: number) {
  const usesFiles = BARE_SQL[name].includes('$FILES')
  const text = BARE_SQL[name].replaceAll('$FILES', `$${params + 1}`)
  return async (...args: unknown[]) => (await run(`bare_${name}`, text, usesFiles ? [...args, filesBase] : args)).rows[0]?.body as string | undefined
}
const bareService = prepare('service', 1)
const bareCategory = prepare('categoryByPrice', 1)
const bareSearch = prepare('search', 1)
const bareFacetedSearch = prepare('facetedSearch', 1)
const bareCategories = prepare('categories', 0)
const bareFilters = {
  deliveryDays: prepare('deliveryDays', 1),
  minRating: prepare('minRating', 1),
  sellerLevel: prepare('sellerLevel', 1),
  sellerOnline: prepare('sellerOnline', 1),
  tags: prepare('tags', 1),
}

// Sellers with a chat socket open: as many bulk sellers as `--online`, each holding one place in
// the hub through a socket that answers every ping, so the heartbeat keeps it.
const keptSockets: HubSocket[] = []
if (onlineSellers > 0) {
  const { rows } = await run('bench_online', `select id from users where email like '%@bulk.marketplace.test' order by email limit $1`, [onlineSellers])
  for (const { id } of rows as { id: string }[]) {
    const slot = await realtime.reserve({ userId: id, familyId: id })
    if (!slot) continue
    let pong = () => undefined as void
    const socket: HubSocket = {
      readyState: 1,
      send: () => undefined,
      ping: () => pong(),
      close: () => undefined,
      terminate: () => undefined,
      on: (event, listener) => {
        if (event === 'pong') pong = listener
        return socket
      },
    }
    realtime.connect(socket, slot)
    keptSockets.push(socket)
  }
}
// The bare twin keeps the sellers online for a second, as the project does (the same hub, the same narrowing).
let keptOnline: { at: number; ids: Promise<string[]> } | undefined
function bareOnline(): Promise<string[]> {
  if (keptOnline && Date.now() - keptOnline.at < 1000) return keptOnline.ids
  const ids = realtime.onlineUsers(20_000).then(async (users) => (await run('bare_online', BARE_SQL.onlineSellers, [users])).rows.map((row) => row.id as string))
  keptOnline = { at: Date.now(), ids }
  return ids
}

const bare = Fastify({ logger: false })
const send = (reply: { header: (name: string, value: string) => unknown; code: (status: number) => { send: (body: string) => unknown } }, body: string | undefined) => {
  reply.header('content-type', 'application/json; charset=utf-8')
  return body === undefined ? reply.code(404).send('{"success":false}') : reply.code(200).send(body)
}
bare.get<{ Params: { id: string } }>(`${API_PREFIX}/services/:id`, async (request, reply) => send(reply, await bareService(request.params.id)))
type ListQuery = { category?: string; search?: string; facets?: string; deliveryDays?: string; minRating?: string; sellerLevel?: string; sellerOnline?: string; tags?: string }
async function bareList(query: ListQuery): Promise<string | undefined> {
  if (query.search !== undefined) return query.facets === 'true' ? bareFacetedSearch(query.search) : bareSearch(query.search)
  if (query.deliveryDays !== undefined) return bareFilters.deliveryDays(Number(query.deliveryDays))
  if (query.minRating !== undefined) return bareFilters.minRating(Number(query.minRating))
  if (query.sellerLevel !== undefined) return bareFilters.sellerLevel(query.sellerLevel.split(','))
  if (query.sellerOnline !== undefined) return bareFilters.sellerOnline(await bareOnline())
  if (query.tags !== undefined) return bareFilters.tags(query.tags.split(','))
  return bareCategory(query.category ?? '')
}
bare.get<{ Querystring: ListQuery }>(`${API_PREFIX}/services`, async (request, reply) => send(reply, await bareList(request.query)))
// The tree as the best server keeps it: in memory, reloaded when 5 seconds old (the project's bound).
let keptTree: { body: string; details: Map<string, string>; at: number } | undefined
async function bareTree() {
  if (keptTree && Date.now() - keptTree.at < 5000) return keptTree
  const body = (await bareCategories()) ?? '{"success":true,"data":[]}'
  const details = new Map<string, string>()
  for (const top of (JSON.parse(body) as { data: { slug: string; subcategories: { slug: string }[] }[] }).data) {
    details.set(top.slug, JSON.stringify({ success: true, data: { ...top, parent: null } }))
  }
  keptTree = { body, details, at: Date.now() }
  return keptTree
}
bare.get(`${API_PREFIX}/categories`, async (_request, reply) => send(reply, (await bareTree()).body))
bare.get<{ Params: { slug: string } }>(`${API_PREFIX}/categories/:slug`, async (request, reply) => send(reply, (await bareTree()).details.get(request.params.slug)))
await bare.listen({ host: '127.0.0.1', port: 0 })
const bareBase = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}${API_PREFIX}`

const { sample, servicesTotal } = await catalogueSample(run)
const ALL_ROUTES = catalogueRoutes(sample, connections, searchConnections)
const ROUTES = values.only === undefined ? ALL_ROUTES : ALL_ROUTES.filter((route) => route.name.includes(values.only!))
if (ROUTES.length === 0) {
  console.error(`--only ${values.only} names no route: ${ALL_ROUTES.map((route) => route.name).join(', ')}`)
  process.exit(2)
}

const workers: ChildProcess[] = []
const load = loader(workers)

interface Sample {
  rps: number
  p50: number
  p99: number
  errors: number
  /** The servers' process CPU time (user and system) during the side's round, per answered request, in µs. */
  cpuPerRequest: number
  /** The local PostgreSQL processes' CPU time during the round, per answered request, in µs (0 on PGlite or a remote database). */
  databaseCpuPerRequest: number
}
const results = ROUTES.map((route) => ({ route, same: false, project: [] as Sample[], bare: [] as Sample[] }))

try {
  for (const result of results) {
    const [mine, theirs] = await Promise.all([fetch(`${projectBase}${result.route.path}`), fetch(`${bareBase}${result.route.path}`)])
    const [a, b] = [await mine.json(), await theirs.json()]
    result.same = mine.status === 200 && theirs.status === 200 && isDeepStrictEqual(a, b)
    if (!result.same) console.warn(`answers differ for ${result.route.name}:\n project ${JSON.stringify(a).slice(0, 600)}\n bare    ${JSON.stringify(b).slice(0, 600)}`)
    // Warm-up: plans, prepared statements, JIT.
    for (const base of [projectBase, bareBase]) await load({ url: `${base}${result.route.path}`, connections: result.route.connections, durationMs: 1000 })
  }

  for (let round = 0; round < rounds; round++) {
    for (const result of results) {
      const order = round % 2 === 0 ? (['project', 'bare'] as const) : (['bare', 'project'] as const)
      for (const side of order) {
        const cpuBefore = process.cpuUsage()
        const databaseBefore = databaseCpu()
        const measured = await load({ url: `${side === 'project' ? projectBase : bareBase}${result.route.path}`, connections: result.route.connections, durationMs })
        const cpu = process.cpuUsage(cpuBefore)
        const answered = Math.max(1, measured.requests)
        const cpuPerRequest = (cpu.user + cpu.system) / answered
        const databaseCpuPerRequest = databaseCpuSince(databaseBefore) / answered
        result[side].push({ rps: measured.rps, p50: measured.p50, p99: measured.p99, errors: measured.errors, cpuPerRequest, databaseCpuPerRequest })
        console.log(`round ${round + 1} ${result.route.name} ${side}: ${measured.rps.toFixed(0)} req/s, p50 ${measured.p50.toFixed(1)} ms, p99 ${measured.p99.toFixed(1)} ms, CPU per request ${cpuPerRequest.toFixed(0)} µs server, ${databaseCpuPerRequest.toFixed(0)} µs database${measured.errors ? `, ${measured.errors} errors` : ''}`)
      }
    }
  }

  // Login storm: logins at full tilt beside reads of one service, argon2 bounded then unbounded.
  const email = `bench-login-${Date.now()}@bench.marketplace.test`
  const password = 'Bench-login-1'
  await run('bench_user', `insert into users (id, email, username, full_name, password_hash, is_active, title, description, activated_at, created_at, updated_at)
      values (gen_random_uuid(), $1, $2, 'Bench Login', $3, true, '', '', now(), now(), now())`, [email, `bench_${Date.now()}`, await hashPassword(password)])
  const storm = loader(workers)
  const storms: { hashConcurrency: number; loginsPerSecond: number; loginP99: number; readRps: number; readP50: number; readP99: number; loginErrors: number }[] = []
  try {
    for (const hashConcurrency of stormMs > 0 ? [config.passwordHashConcurrency, 64] : []) {
      limitPasswordHashing(hashConcurrency)
      const [logins, reads] = await Promise.all([
        storm({ url: `${projectBase}/auth/login`, method: 'POST', body: JSON.stringify({ email, password }), connections: 32, durationMs: stormMs }),
        load({ url: `${projectBase}${ROUTES[0]!.path}`, connections, durationMs: stormMs }),
      ])
      storms.push({ hashConcurrency, loginsPerSecond: logins.rps, loginP99: logins.p99, readRps: reads.rps, readP50: reads.p50, readP99: reads.p99, loginErrors: logins.errors })
      console.log(`login storm, ${hashConcurrency} hashes at once: ${logins.rps.toFixed(0)} logins/s (p99 ${logins.p99.toFixed(0)} ms); GET /services/{id} ${reads.rps.toFixed(0)} req/s, p99 ${reads.p99.toFixed(1)} ms`)
    }
  } finally {
    limitPasswordHashing(defaultHashConcurrency())
    await run('bench_user_gone', `delete from users where email = $1`, [email])
  }

  const figuresOf = (samples: Sample[]) => ({
    rps: median(samples.map((s) => s.rps)),
    p50: median(samples.map((s) => s.p50)),
    p99: median(samples.map((s) => s.p99)),
    cpuPerRequest: median(samples.map((s) => s.cpuPerRequest)),
    databaseCpuPerRequest: median(samples.map((s) => s.databaseCpuPerRequest)),
    errors: samples.reduce((sum, s) => sum + s.errors, 0),
  })
  const summaryRows = results.map(({ route, same, project, bare: bareSamples }) => {
    const ratios = project.map((sample, index) => sample.rps / bareSamples[index]!.rps)
    return {
      route: route.name,
      connections: route.connections,
      sameAnswer: same,
      project: figuresOf(project),
      bare: figuresOf(bareSamples),
      ratio: median(ratios),
      ratioRange: [Math.min(...ratios), Math.max(...ratios)],
      rounds: { project, bare: bareSamples },
    }
  })
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`
  const report = {
    date: new Date().toISOString(),
    database: database.kind,
    activeServices: servicesTotal,
    machine,
    durationSeconds: durationMs / 1000,
    rounds,
    routes: summaryRows,
    loginStorm: storms,
  }
  const stamp = report.date.slice(0, 16).replace(/[:T]/g, '-')
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true })
  writeFileSync(new URL(`./results/${stamp}-${database.kind}.json`, import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
  const f = (value: number) => value.toFixed(value >= 100 ? 0 : 1)
  const markdown = [
    `# Catalogue benchmark, ${report.date.slice(0, 16).replace('T', ' ')} UTC, ${database.kind}`,
    '',
    `${servicesTotal} active services; ${machine}; ${rounds} interleaved rounds of ${durationMs / 1000} s per side.`,
    '',
    '| route | conns | same answer | project req/s | p50 ms | p99 ms | CPU µs / req: server, database | bare req/s | p50 ms | p99 ms | CPU µs / req: server, database | project / bare (range) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...summaryRows.map(
      (row) =>
        `| \`${row.route}\` | ${row.connections} | ${row.sameAnswer ? 'yes' : 'NO'} | ${f(row.project.rps)} | ${f(row.project.p50)} | ${f(row.project.p99)} | ${row.project.cpuPerRequest.toFixed(0)}, ${row.project.databaseCpuPerRequest.toFixed(0)} | ${f(row.bare.rps)} | ${f(row.bare.p50)} | ${f(row.bare.p99)} | ${row.bare.cpuPerRequest.toFixed(0)}, ${row.bare.databaseCpuPerRequest.toFixed(0)} | ${row.ratio.toFixed(2)} (${row.ratioRange.map((value) => value.toFixed(2)).join('-')}) |`,
    ),
    '',
    '| login storm: hashes at once | logins/s | login p99 ms | GET /services/{id} req/s | p50 ms | p99 ms |',
    '|---|---|---|---|---|---|',
    ...storms.map((row) => `| ${row.hashConcurrency} | ${f(row.loginsPerSecond)} | ${f(row.loginP99)} | ${f(row.readRps)} | ${f(row.readP50)} | ${f(row.readP99)} |`),
    '',
  ].join('\n')
  writeFileSync(new URL(`./results/${stamp}-${database.kind}.md`, import.meta.url), markdown)
  console.log(`\n${markdown}`)
} finally {
  for (const worker of workers) worker.kill()
  await bare.close()
  // Closing the app closes the hub it was given.
  await app.close()
  await closeBare()
  await database.close()
}
