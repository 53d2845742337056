/**
 * `npm run bench:messaging [-- --sockets N --messages M --concurrency C]`: fan-out latency, the
 * time from sending `POST /messages` to the frame arriving on the recipient's socket, with N
 * sockets connected to one instance (N/2 pairs of users, one socket each), over real HTTP and
 * WebSocket on 127.0.0.1. Then the read route: `GET /messages/conversations/{id}` of a long
 * conversation, beside a bare Fastify + `pg` route answering the same JSON (token verified with
 * the same library, the session checked and the page built by one prepared statement),
 * interleaved for three rounds. On DATABASE_URL (PostgreSQL) or the embedded database, in process
 * (REDIS_URL makes the frames go through Redis). Not part of `npm test`.
 */
import { createHmac } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import Fastify from 'fastify'
import { createVerifier } from 'fast-jwt'
import pg from 'pg'
import WebSocket from 'ws'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { createBenchUsers, inProcessBenchConfig, percentile as percentileOf } from './support/users.ts'

const { values } = parseArgs({ options: { sockets: { type: 'string', default: '1000' }, messages: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '10' }, reads: { type: 'string', default: '2000' } } })
const [socketCount, messageCount, concurrency, readCount] = [Number(values.sockets), Number(values.messages), Number(values.concurrency), Number(values.reads)]
if (![socketCount, messageCount, concurrency, readCount].every((value) => Number.isSafeInteger(value) && value > 0) || socketCount % 2 !== 0) {
  console.error('--sockets (even), --messages, --concurrency and --reads must be positive whole numbers')
  process.exit(2)
}

const config = inProcessBenchConfig(loadConfig())
const database = await openMigratedDatabase(config.database)
const app = await buildApp({ config, database })
await app.listen({ host: '127.0.0.1', port: 0 })
const { port } = app.server.address() as AddressInfo
const base = `http://127.0.0.1:${port}/api/v1`
const { container } = app

const run = Date.now().toString(36)
const users = await createBenchUsers(container, { count: socketCount, label: 'chat' })

/** Frames waited for, by message content (the frame may arrive before the HTTP answer). */
const waiting = new Map<string, () => void>()
const sockets = await Promise.all(
  users.map(
    (user) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/messages/ws`, { headers: { authorization: `Bearer ${user.token}` } })
        ws.on('message', (data: Buffer) => {
          const frame = JSON.parse(data.toString('utf8')) as { type: string; data: { content?: string; senderId?: string } }
          if (frame.type !== 'message' || frame.data.senderId === user.id) return
          waiting.get(frame.data.content ?? '')?.()
        })
        ws.once('open', () => resolve(ws))
        ws.once('error', reject)
      }),
  ),
)
console.log(`${container.realtime.localSocketCount()} sockets open (${container.realtime.kind} hub, ${config.database.kind})`)

/** How much later than the HTTP answer each frame arrived (negative: before it). */
const frameAfterAnswer: number[] = []
const send = async (index: number): Promise<number> => {
  const pair = index % (socketCount / 2)
  const [from, to] = [users[pair * 2]!, users[pair * 2 + 1]!]
  const content = `bench ${run} ${index}`
  const started = performance.now()
  const delivered = new Promise<void>((resolve) => waiting.set(content, resolve))
  const response = await fetch(`${base}/messages`, { method: 'POST', headers: { authorization: `Bearer ${from.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ recipientId: to.id, content }) })
  if (response.status !== 201) throw new Error(`POST /messages answered ${response.status}: ${await response.text()}`)
  const answered = performance.now()
  await delivered
  const arrived = performance.now()
  waiting.delete(content)
  frameAfterAnswer.push(arrived - answered)
  return arrived - started
}

const measure = async (count: number, one: (index: number) => Promise<number>) => {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) latencies.push(await one(next++))
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const percentile = (p: number) => percentileOf(latencies, p)
  return `${(count / seconds).toFixed(0)}/s, p50 ${percentile(50).toFixed(1)} ms, p99 ${percentile(99).toFixed(1)} ms`
}

// Warm up (and open every pair's conversation), then measure.
for (let index = 0; index < socketCount / 2; index++) await send(index)
frameAfterAnswer.length = 0
console.log(`fan-out: ${messageCount} messages, ${concurrency} at a time: ${await measure(messageCount, send)} (POST to frame on the recipient's socket)`)
const afterAnswer = frameAfterAnswer.sort((a, b) => a - b)
console.log(`  the frame came ${afterAnswer[Math.floor(afterAnswer.length / 2)]!.toFixed(1)} ms (median), ${afterAnswer.at(-1)!.toFixed(1)} ms (worst) after the HTTP answer`)

// The read route on the longest conversation (pair 0 holds about messages / pairs + 1 messages).
const [reader, writer] = [users[1]!, users[0]!]
for (let index = 0; index < 200; index++) await send(0)
const conversation = (await (await fetch(`${base}/messages/conversations?limit=1`, { headers: { authorization: `Bearer ${writer.token}` } })).json()) as { data: { items: { id: string }[] } }
const conversationId = conversation.data.items[0]!.id
const read = async () => {
  const started = performance.now()
  const response = await fetch(`${base}/messages/conversations/${conversationId}?limit=50`, { headers: { authorization: `Bearer ${reader.token}` } })
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`GET conversation answered ${response.status}`)
  return performance.now() - started
}
for (let index = 0; index < 20; index++) await read()

// The bare twin: the same answer from one prepared statement that also checks the session (the
// family live, the token not revoked, the account usable) and that the caller takes part. The
// bench's messages carry no attachment (an attachment's signed URL is made in Node).
const BARE_CONVERSATION = `
  with me as (
    select u.id from token_families f join users u on u.id = f.user_id
    where f.id = $1 and f.user_id = $3 and f.revoked_at is null and f.expires_at > now()
      and not exists (select 1 from revoked_tokens r where r.jti = $2)
      and u.is_active and u.suspended_at is null and u.token_version = $4),
  c as (
    select c.id, c.last_seq, greatest(1, c.last_seq - $6 + 1) as oldest from conversations c
    where c.id = $5 and exists (select 1 from conversation_participants p join me on me.id = p.user_id where p.conversation_id = c.id)),
  other as (select p.last_read_seq from conversation_participants p join c on c.id = p.conversation_id where p.user_id <> (select id from me))
  select (select count(*) from me)::int as live, json_build_object('success', true, 'data', json_build_object(
    'items', coalesce((select json_agg(json_build_object('id', m.id, 'conversationId', m.conversation_id, 'senderId', m.sender_id, 'content', m.content,
        'attachment', null, 'offer', null, 'isRead', m.seq <= case when m.sender_id = (select id from me) then (select last_read_seq from other) else c.last_seq end,
        'createdAt', to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) order by m.seq desc)
      from messages m where m.conversation_id = c.id and m.seq between c.oldest and c.last_seq), '[]'::json),
    'pagination', json_build_object('page', 1, 'limit', $6, 'total', c.last_seq, 'pages', ceil(c.last_seq / $6::numeric)::int,
      'hasNext', c.oldest > 1, 'hasPrev', false, 'nextCursor', case when c.oldest > 1 then c.oldest::text end)))::text as body
  from (select 1) as one left join c on true`
type BareRows = { rows: { live: number; body: string | null }[] }
// On PostgreSQL its own pool, as large as the project's; on PGlite the one embedded connection.
const barePool = config.database.kind === 'postgres' ? new pg.Pool({ connectionString: config.database.url, max: config.database.poolSize }) : undefined
const bareRun = (text: string, values: unknown[]): Promise<BareRows> =>
  barePool
    ? barePool.query({ name: 'bare_conversation', text, values })
    : (database as unknown as { client: { query: (text: string, values: unknown[]) => Promise<BareRows> } }).client.query(text, values)
// The access key is derived from the secret as the API derives it (src/modules/auth/tokens.ts).
const accessKey = createHmac('sha256', config.jwt.accessSecret).update('marketplace:access').digest()
const verifyAccess = createVerifier({ key: accessKey, algorithms: ['HS256'], checkTyp: 'access+jwt', requiredClaims: ['sub', 'exp', 'iat', 'jti'] })
const bare = Fastify({ logger: false })
bare.get<{ Params: { id: string }; Querystring: { limit?: string } }>('/api/v1/messages/conversations/:id', async (request, reply) => {
  let claims: { sub: string; jti: string; fam: string; ver: number }
  try {
    claims = verifyAccess((request.headers.authorization ?? '').replace(/^Bearer /, '')) as typeof claims
  } catch {
    return reply.code(401).send('{"success":false}')
  }
  const limit = Number(request.query.limit ?? 50)
  const [row] = (await bareRun(BARE_CONVERSATION, [claims.fam, claims.jti, claims.sub, claims.ver, request.params.id, limit])).rows
  reply.header('content-type', 'application/json; charset=utf-8')
  if (!row || row.live === 0) return reply.code(401).send('{"success":false}')
  return row.body === null ? reply.code(404).send('{"success":false}') : reply.code(200).send(row.body)
})
await bare.listen({ host: '127.0.0.1', port: 0 })
const bareBase = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/api/v1`
const readFrom = (origin: string) => async () => {
  const started = performance.now()
  const response = await fetch(`${origin}/messages/conversations/${conversationId}?limit=50`, { headers: { authorization: `Bearer ${reader.token}` } })
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`GET conversation answered ${response.status}`)
  return performance.now() - started
}
const answerOf = async (origin: string) => (await fetch(`${origin}/messages/conversations/${conversationId}?limit=50`, { headers: { authorization: `Bearer ${reader.token}` } })).json()
const sameAnswer = isDeepStrictEqual(await answerOf(base), await answerOf(bareBase))
for (let index = 0; index < 20; index++) await readFrom(bareBase)()
const rates = { project: [] as number[], bare: [] as number[] }
for (let round = 1; round <= 3; round++) {
  const sides = round % 2 === 1 ? (['project', 'bare'] as const) : (['bare', 'project'] as const)
  for (const side of sides) {
    const line = await measure(readCount, readFrom(side === 'project' ? base : bareBase))
    rates[side].push(Number(line.split('/s')[0]))
    console.log(`round ${round} GET /messages/conversations/{id} (limit 50) ${side}: ${readCount} reads, ${concurrency} at a time: ${line}`)
  }
}
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
console.log(`GET /messages/conversations/{id}: project / bare ${(sum(rates.project) / sum(rates.bare)).toFixed(2)} over 3 rounds; same answer: ${sameAnswer ? 'yes' : 'NO'}`)
await bare.close()
await barePool?.end()

for (const socket of sockets) socket.terminate()
await app.close()
await database.close()
