import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { fileForm, png } from '../factories/files.ts'
import { withDatabase } from '../setup/global-setup.ts'
import { startS3, type TestS3 } from '../setup/s3.ts'
import { openSocket } from '../setup/sockets.ts'
import { TEST_REDIS_URL } from '../setup/test-app.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const url = process.env.TEST_DATABASE_URL

async function freePort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Waits for an instance to answer `/ready` (start-up includes migrations and the module graph). */
async function untilReady(port: number, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const status = (await fetch(`http://127.0.0.1:${port}/ready`).catch(() => undefined))?.status
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`the instance on port ${port} did not become ready`)
}

/** The promise, or a failure naming what did not happen once `ms` have passed. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** A round-robin load balancer on loopback that says which upstream answered (`x-upstream`). */
async function startProxy(upstreams: number[]): Promise<{ port: number; server: Server }> {
  let next = 0
  const server = createServer((incoming, outgoing) => {
    const index = next++ % upstreams.length
    const forwarded = httpRequest(
      { host: '127.0.0.1', port: upstreams[index], method: incoming.method, path: incoming.url, headers: { ...incoming.headers, 'x-forwarded-for': incoming.headers['x-forwarded-for'] ?? '127.0.0.1' } },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-upstream': String(index) })
        answer.pipe(outgoing)
      },
    )
    forwarded.on('error', () => outgoing.writeHead(502).end())
    incoming.pipe(forwarded)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, server }
}

/**
 * Scale-out, proven without Docker: three API processes with `RUN_WORKER=false`, one
 * worker process and a round-robin proxy, on one PostgreSQL, Redis and S3-compatible store, with
 * mail through SMTP. Every step of the flow lands on another instance than the step before.
 */
describe.runIf(url && TEST_REDIS_URL)('three API instances, one worker, behind a load balancer', () => {
  let name: string
  let admin: pg.Client
  let s3: TestS3
  let smtp: SMTPServer
  let proxy: { port: number; server: Server }
  let ports: number[]
  const children: ChildProcess[] = []
  const inbox: string[] = []
  const dataDirs: string[] = []
  const run = randomBytes(4).toString('hex')

  const env = (smtpPort: number) => ({
    PATH: process.env.PATH,
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    DATABASE_URL: withDatabase(url!, name),
    REDIS_URL: TEST_REDIS_URL,
    JWT_ACCESS_SECRET: 'scale-out-access-secret-0123456789-abcdef',
    JWT_REFRESH_SECRET: 'scale-out-refresh-secret-0123456789-abcdef',
    FILE_SIGNING_SECRET: 'scale-out-file-signing-secret-0123456789-abcdef',
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    TRUST_PROXY: 'true',
    RATE_LIMIT_AUTH: '5',
    LOG_LEVEL: 'silent',
    // Each instance has its own disk, as in separate containers: files must go through S3.
    DATA_DIR: (() => {
      const dir = mkdtempSync(join(tmpdir(), 'marketplace-scale-'))
      dataDirs.push(dir)
      return dir
    })(),
    ...s3.env,
  })

  beforeAll(async () => {
    name = `mk_${inject('pgTemplate').split('_')[2]}_${randomBytes(6).toString('hex')}`
    admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`create database ${name} template ${inject('pgTemplate')}`)
    s3 = await startS3()
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = []
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('end', () => {
          inbox.push(Buffer.concat(chunks).toString('utf8'))
          callback()
        })
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve))
    const smtpPort = (smtp.server.address() as AddressInfo).port

    ports = await Promise.all([freePort(), freePort(), freePort()])
    for (const port of ports) {
      children.push(spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, stdio: 'ignore', env: { ...env(smtpPort), PORT: String(port), RUN_WORKER: 'false' } }))
    }
    children.push(spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], { cwd: ROOT, stdio: 'ignore', env: env(smtpPort) }))
    for (const port of ports) await untilReady(port)
    proxy = await startProxy(ports)
  }, 120_000)

  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)))))
    proxy?.server.close()
    smtp?.close()
    await s3?.stop()
    await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  /** A request through the load balancer, or straight to one instance when `port` is given. */
  const call = async (method: string, path: string, options: { token?: string; json?: unknown; body?: Buffer; headers?: Record<string, string>; port?: number } = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    if (options.json !== undefined) headers['content-type'] = 'application/json'
    const response = await fetch(`http://127.0.0.1:${options.port ?? proxy.port}${path}`, {
      method,
      headers,
      body: options.json !== undefined ? JSON.stringify(options.json) : options.body,
    })
    return { status: response.status, upstream: response.headers.get('x-upstream'), headers: response.headers, body: Buffer.from(await response.arrayBuffer()) }
  }
  const json = (answer: { body: Buffer }) => JSON.parse(answer.body.toString('utf8'))

  /**
   * Registers through the load balancer, waits for the worker to mail the activation link,
   * activates and logs in. `client` is the address the proxy reports (authentication routes are
   * limited per address).
   */
  async function signUp(fullName: string, client = '127.0.0.1') {
    const email = `scale-${randomBytes(4).toString('hex')}@example.test`
    const headers = { 'x-forwarded-for': client }
    const registered = await call('POST', '/api/v1/auth/register', { json: { email, password: 'Secret123', fullName }, headers })
    expect(registered.status, registered.body.toString()).toBe(201)

    // The API instances run no worker: the mail can only come from the worker process.
    await expect.poll(() => inbox.find((mail) => mail.includes(email)), { timeout: 30_000, interval: 100 }).toBeDefined()
    // Quoted-printable: soft line breaks, then `=XX` escapes.
    const mail = inbox
      .find((candidate) => candidate.includes(email))!
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    const token = /token=([\w.-]+)/.exec(mail)![1]!

    const activated = await call('POST', '/api/v1/auth/activate', { json: { token }, headers })
    expect(activated.status, activated.body.toString()).toBe(200)
    const loggedIn = await call('POST', '/api/v1/auth/login', { json: { email, password: 'Secret123' }, headers })
    expect(loggedIn.status).toBe(200)
    const session = json(loggedIn).data as { accessToken: string; user: { id: string } }
    return { email, registered, activated, loggedIn, accessToken: session.accessToken, userId: session.user.id }
  }

  it('registers on one instance, has the worker mail the link, activates on another, logs in on a third and uses the token on the first', async () => {
    const { email, registered, activated, loggedIn } = await signUp('Scale Out')
    const me = await call('GET', '/api/v1/users/me', { token: json(loggedIn).data.accessToken })
    expect(me.status).toBe(200)
    expect(json(me).data.email).toBe(email)
    expect(new Set([registered.upstream, activated.upstream, loggedIn.upstream]).size).toBe(3)
    expect(me.upstream).not.toBe(loggedIn.upstream)

    // An upload written through one instance is read through another (S3, not a local disk).
    const image = await png({ width: 40, height: 30 })
    const form = fileForm(image, { filename: 'photo.png', contentType: 'image/png' })
    const uploaded = await call('POST', '/api/v1/uploads', { token: json(loggedIn).data.accessToken, body: form.payload, headers: form.headers })
    expect(uploaded.status, uploaded.body.toString()).toBe(201)
    const fileUrl = new URL(json(uploaded).data.url as string)
    const served = await call('GET', `${fileUrl.pathname}${fileUrl.search}`, { token: json(loggedIn).data.accessToken })
    expect(served.status).toBe(200)
    expect(served.upstream).not.toBe(uploaded.upstream)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(served.body.length).toBe(json(uploaded).data.size)
  })

  it('counts rate limits across instances: the sixth authentication request from one client in a window is refused, whichever instance takes it', async () => {
    const client = { 'x-forwarded-for': `203.0.113.${Math.floor(Math.random() * 200) + 1}` }
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await call('GET', `/api/v1/auth/check-email?email=check-${run}-${i}@example.test`, { headers: client }))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429])
    expect(new Set(answers.map((answer) => answer.upstream)).size).toBe(3)
    expect(answers[4]!.headers.get('x-ratelimit-remaining')).toBe('0')
  })

  it('pushes a chat message sent through one instance to the recipient’s socket on another (Redis fan-out)', async () => {
    // Each user from its own address: six authentication requests from one would pass the limit.
    const subnet = `198.51.${Math.floor(Math.random() * 256)}`
    const recipient = await signUp('Chat Recipient', `${subnet}.1`)
    const sender = await signUp('Chat Sender', `${subnet}.2`)

    const socket = await within(10_000, 'opening the socket', openSocket(`ws://127.0.0.1:${ports[0]}/api/v1/messages/ws`, { header: recipient.accessToken }))
    try {
      const sent = await call('POST', '/api/v1/messages', { port: ports[1], token: sender.accessToken, json: { recipientId: recipient.userId, content: 'Hello from another instance' } })
      expect(sent.status, sent.body.toString()).toBe(201)
      const message = json(sent).data as { id: string; conversationId: string }

      const frame = await within(10_000, 'the message frame on the socket of instance 0', socket.message(message.id))
      expect(frame).toMatchObject({ type: 'message', data: { id: message.id, conversationId: message.conversationId, senderId: sender.userId, content: 'Hello from another instance' } })
    } finally {
      socket.close()
    }
  })
})
