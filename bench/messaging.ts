/**
 * `npm run bench:messaging [-- --sockets N --messages M --concurrency C]`: fan-out latency, the
 * time from sending `POST /messages` to the frame arriving on the recipient's socket, with N
 * sockets connected to one instance (N/2 pairs of users, one socket each), over real HTTP and
 * WebSocket on 127.0.0.1. Then the read route: `GET /messages/conversations/{id}` of a long
 * conversation. On DATABASE_URL (PostgreSQL) or the embedded database, in process (REDIS_URL
 * makes the frames go through Redis). Not part of `npm test`.
 */
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import WebSocket from 'ws'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openMigratedDatabase } from '../src/db/open.ts'
import { hashPassword } from '../src/lib/passwords.ts'

const { values } = parseArgs({ options: { sockets: { type: 'string', default: '1000' }, messages: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '10' }, reads: { type: 'string', default: '300' } } })
const [socketCount, messageCount, concurrency, readCount] = [Number(values.sockets), Number(values.messages), Number(values.concurrency), Number(values.reads)]
if (![socketCount, messageCount, concurrency, readCount].every((value) => Number.isSafeInteger(value) && value > 0) || socketCount % 2 !== 0) {
  console.error('--sockets (even), --messages, --concurrency and --reads must be positive whole numbers')
  process.exit(2)
}

const loaded = loadConfig()
const config = { ...loaded, host: '127.0.0.1', port: 0, rateLimit: { ...loaded.rateLimit, general: 10_000_000 }, runWorker: false, logLevel: 'warn' as const }
const database = await openMigratedDatabase(config.database)
const app = await buildApp({ config, database })
await app.listen({ host: '127.0.0.1', port: 0 })
const { port } = app.server.address() as AddressInfo
const base = `http://127.0.0.1:${port}/api/v1`
const { container } = app

const run = Date.now().toString(36)
const passwordHash = await hashPassword('Bench-Passw0rd')
const users: { id: string; token: string }[] = []
for (let index = 0; index < socketCount; index++) {
  const account = await container.db.transaction((tx) => container.users.createAccount(tx, { email: `chat-${run}-${index}@bench.marketplace.test`, fullName: `Chat Bench ${index}`, passwordHash, isActive: true }))
  users.push({ id: account.id, token: (await container.auth.issueSession(account)).accessToken })
}

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
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!
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
console.log(`GET /messages/conversations/{id} (limit 50): ${readCount} reads, ${concurrency} at a time: ${await measure(readCount, read)}`)

for (const socket of sockets) socket.terminate()
await app.close()
await database.close()
