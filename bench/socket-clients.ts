/**
 * Chat clients for `npm run bench:sockets`, in a process of their own so that the server's
 * figures are the server's. Driven over IPC by bench/sockets.ts:
 * - `open`: opens one socket per user given (`parallel` upgrades in flight), keeps them open;
 * - `cap`: opens `count` sockets for one user, one after the other, and says how each went
 *   (`open`, or the HTTP status that refused the upgrade); the open ones stay open;
 * - `send`: posts `messages` messages (`concurrency` at a time) from each pair's sender to its
 *   recipient, whose socket this process holds, and answers the time from sending the POST to
 *   the frame arriving on that socket, per message;
 * - `count`: how many of its sockets are open, and how many closed since they opened;
 * - `close`: closes them and exits.
 */
import WebSocket from 'ws'

interface BenchUser {
  id: string
  token: string
}
type Command =
  | { id: number; cmd: 'open'; port: number; users: BenchUser[]; parallel: number }
  | { id: number; cmd: 'cap'; port: number; user: BenchUser; count: number }
  | { id: number; cmd: 'send'; port: number; pairs: { senderToken: string; recipientId: string }[]; messages: number; concurrency: number; label: string }
  | { id: number; cmd: 'count' }
  | { id: number; cmd: 'close' }

const sockets: WebSocket[] = []
const capSockets: WebSocket[] = []
let closedSinceOpen = 0
/** Frames waited for, by message content (the frame may arrive before the HTTP answer). */
const waiting = new Map<string, () => void>()

function connect(port: number, user: BenchUser): Promise<WebSocket | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/messages/ws`, { headers: { authorization: `Bearer ${user.token}` } })
    ws.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0)
      response.resume()
      ws.terminate()
    })
    ws.once('error', () => resolve(0))
    ws.once('open', () => {
      ws.on('message', (data: Buffer) => {
        const frame = JSON.parse(data.toString('utf8')) as { type: string; data: { content?: string; senderId?: string } }
        if (frame.type === 'message' && frame.data.senderId !== user.id) waiting.get(frame.data.content ?? '')?.()
      })
      ws.once('close', () => closedSinceOpen++)
      resolve(ws)
    })
  })
}

async function open(port: number, users: BenchUser[], parallel: number) {
  const refused: Record<string, number> = {}
  let next = 0
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < users.length) {
        const result = await connect(port, users[next++]!)
        if (typeof result === 'number') refused[result] = (refused[result] ?? 0) + 1
        else sockets.push(result)
      }
    }),
  )
  return { opened: sockets.length, refused }
}

async function cap(port: number, user: BenchUser, count: number) {
  const outcomes: (string | number)[] = []
  for (let index = 0; index < count; index++) {
    const result = await connect(port, user)
    if (typeof result === 'number') outcomes.push(result)
    else {
      capSockets.push(result)
      outcomes.push('open')
    }
  }
  return { outcomes }
}

async function send(command: Extract<Command, { cmd: 'send' }>) {
  const latencies: number[] = []
  const failures: string[] = []
  let next = 0
  const base = `http://127.0.0.1:${command.port}/api/v1`
  await Promise.all(
    Array.from({ length: command.concurrency }, async () => {
      while (next < command.messages) {
        const index = next++
        const pair = command.pairs[index % command.pairs.length]!
        const content = `bench ${command.label} ${process.pid} ${index}`
        const delivered = new Promise<void>((resolve) => waiting.set(content, resolve))
        const started = performance.now()
        const response = await fetch(`${base}/messages`, { method: 'POST', headers: { authorization: `Bearer ${pair.senderToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ recipientId: pair.recipientId, content }) })
        if (response.status !== 201) {
          failures.push(`${response.status} ${(await response.text()).slice(0, 200)}`)
          waiting.delete(content)
          continue
        }
        await response.arrayBuffer()
        await delivered
        latencies.push(performance.now() - started)
        waiting.delete(content)
      }
    }),
  )
  return { latencies, failures: failures.length, failure: failures[0] }
}

const countOpen = (list: WebSocket[]) => list.filter((ws) => ws.readyState === WebSocket.OPEN).length

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case 'open':
      return open(command.port, command.users, command.parallel)
    case 'cap':
      return cap(command.port, command.user, command.count)
    case 'send':
      return send(command)
    case 'count':
      return { open: countOpen(sockets), capOpen: countOpen(capSockets), closedSinceOpen }
    case 'close':
      for (const ws of [...sockets, ...capSockets]) ws.terminate()
      setImmediate(() => process.exit(0))
      return {}
  }
}

process.on('message', (command: Command) => {
  void handle(command).then((answer) => process.send!({ reply: command.id, ...(answer as object) }))
})
