import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { desc, eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { SMTPServer } from 'smtp-server'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createUser } from '../../../test/factories/users.ts'
import { MemoryMailer, openTestDatabase, request, testConfig, type TestContext } from '../../../test/setup/test-app.ts'
import { buildApp } from '../../app.ts'
import type { Database } from '../../db/client.ts'
import { ManualClock } from '../../lib/clock.ts'
import { activationEmail, passwordResetEmail } from '../../modules/auth/auth-emails.ts'
import { runWithJobSignal } from '../outbox/job-context.ts'
import { createOutbox } from '../outbox/outbox.ts'
import { outboxJobs } from '../outbox/outbox.table.ts'
import { createWorker } from '../outbox/worker.ts'
import { createFileMailer, createSmtpMailer, SMTP_TIMEOUTS, type MailMessage } from './mailer.ts'

interface ReceivedMail {
  mailFrom: string | undefined
  rcptTo: string[]
  raw: string
}

interface TestSmtpServer {
  url: string
  received: ReceivedMail[]
  /** While true, every message is refused with 550 after its data arrived. */
  rejecting: boolean
  /** While true, the server reads a message and never answers it (a mail server that hangs). */
  stalling: boolean
  /** Told when a message was read and left unanswered. */
  onStall?: () => void
  /** Told when a client's connection ends. */
  onClose?: () => void
  close(): Promise<void>
}

async function startSmtpServer(): Promise<TestSmtpServer> {
  const state: TestSmtpServer = { url: '', received: [], rejecting: false, stalling: false, close: async () => {} }
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 1000,
    onClose() {
      state.onClose?.()
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (state.stalling) {
          state.onStall?.()
          return
        }
        if (state.rejecting) {
          callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }))
          return
        }
        state.received.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          rcptTo: session.envelope.rcptTo.map((address) => address.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`
  state.close = () => new Promise<void>((resolve) => server.close(resolve))
  return state
}

/** A port on which nothing listens. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

/** A server that accepts connections and never says a word (no SMTP greeting). */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** Resolves the next time `register` calls back. */
const nextCall = (register: (callback: () => void) => void) => new Promise<void>((resolve) => register(resolve))

interface MimePart {
  headers: Record<string, string>
  body: string
}

function splitHeaders(raw: string): MimePart {
  const normalised = raw.replace(/\r\n/g, '\n')
  const end = normalised.indexOf('\n\n')
  const head = end === -1 ? normalised : normalised.slice(0, end)
  const headers: Record<string, string> = {}
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { headers, body: end === -1 ? '' : normalised.slice(end + 2) }
}

function decodeQuotedPrintable(text: string): string {
  const joined = text.replace(/=\n/g, '')
  const bytes: number[] = []
  for (let index = 0; index < joined.length; index++) {
    const hex = joined.slice(index + 1, index + 3)
    if (joined[index] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16))
      index += 2
    } else {
      bytes.push(joined.charCodeAt(index))
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

function decodeBody(part: MimePart): string {
  const encoding = (part.headers['content-transfer-encoding'] ?? '7bit').toLowerCase()
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(part.body)
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8')
  return part.body
}

/** Just enough MIME to read what nodemailer produces: headers, and the decoded text and HTML parts. */
function parseMail(raw: string) {
  const root = splitHeaders(raw)
  const contentType = root.headers['content-type'] ?? ''
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1]
  const parts = boundary
    ? root.body
        .split(`--${boundary}`)
        .slice(1)
        .filter((chunk) => !chunk.startsWith('--'))
        .map((chunk) => splitHeaders(chunk.replace(/^\n/, '')))
    : [root]
  const bodyOf = (type: string) => {
    const part = parts.find((candidate) => (candidate.headers['content-type'] ?? '').startsWith(type))
    return part ? decodeBody(part).trimEnd() : undefined
  }
  return { headers: root.headers, contentType, text: bodyOf('text/plain'), html: bodyOf('text/html') }
}

/**
 * On PostgreSQL the harness drops the database while pool clients may still be ending; the pool
 * re-emits their "terminated by administrator" errors, which are not what these tests are about.
 */
function ignoreTeardownErrors(database: Database): void {
  if (database.kind === 'postgres') database.pool.on('error', () => {})
}

const LINK = 'http://app.test/reset-password?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTk0MDAwMC0wMDAwLTcwMDAtODAwMC0wMDAwMDAwMDAwMDAifQ.c2lnbmF0dXJlLXZhbHVl'

const MESSAGE: MailMessage = {
  to: 'maria.lopez@example.test',
  subject: 'Reset your password',
  text: `Hello María,\n\nChoose a new password: ${LINK}\n`,
  html: `<p>Hello María,</p><p><a href="${LINK}">Choose a new password</a></p>`,
}

describe('createSmtpMailer', () => {
  let smtp: TestSmtpServer
  beforeAll(async () => {
    smtp = await startSmtpServer()
  })
  afterAll(() => smtp.close())
  afterEach(() => {
    smtp.received.length = 0
    smtp.rejecting = false
    smtp.stalling = false
    smtp.onStall = undefined
    smtp.onClose = undefined
  })

  it('delivers one multipart/alternative message with the text and HTML parts to the SMTP server', async () => {
    const mailer = createSmtpMailer(smtp.url, 'Marketplace <no-reply@example.test>')
    await mailer.send(MESSAGE)
    mailer.close()

    expect(smtp.received).toHaveLength(1)
    const [received] = smtp.received
    expect(received!.mailFrom).toBe('no-reply@example.test')
    expect(received!.rcptTo).toEqual(['maria.lopez@example.test'])
    const mail = parseMail(received!.raw)
    expect(mail.headers.to).toBe('maria.lopez@example.test')
    expect(mail.headers.from).toBe('Marketplace <no-reply@example.test>')
    expect(mail.headers.subject).toBe('Reset your password')
    expect(mail.contentType).toMatch(/^multipart\/alternative;/)
    expect(mail.text).toBe(MESSAGE.text.trimEnd())
    expect(mail.html).toBe(MESSAGE.html)
  })

  it('throws when the SMTP server refuses the message, so the outbox retries it', async () => {
    smtp.rejecting = true
    const mailer = createSmtpMailer(smtp.url, 'Marketplace <no-reply@example.test>')
    await expect(mailer.send(MESSAGE)).rejects.toThrow(/550/)
    mailer.close()
    expect(smtp.received).toHaveLength(0)
  })

  it('throws when nothing listens on the SMTP port', async () => {
    const mailer = createSmtpMailer(`smtp://127.0.0.1:${await closedPort()}`, 'Marketplace <no-reply@example.test>')
    await expect(mailer.send(MESSAGE)).rejects.toThrow(/ECONNREFUSED/)
    mailer.close()
  })

  it('sets its own timeouts, not nodemailer\'s minutes, and gives up on a server that never greets', async () => {
    expect(SMTP_TIMEOUTS).toEqual({ dnsTimeout: 5_000, connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000 })
    const silent = await silentServer()
    try {
      // The same path with a greeting timeout short enough for a test.
      const mailer = createSmtpMailer(`smtp://127.0.0.1:${silent.port}`, 'Marketplace <no-reply@example.test>', { ...SMTP_TIMEOUTS, greetingTimeout: 50 })
      await expect(mailer.send(MESSAGE)).rejects.toThrow(/greeting/i)
      mailer.close()
    } finally {
      await silent.close()
    }
  })

  it('drops the connection when the job it sends for runs out of time, and sends nothing after', async () => {
    smtp.stalling = true
    const stalled = nextCall((callback) => (smtp.onStall = callback))
    const closed = nextCall((callback) => (smtp.onClose = callback))
    const mailer = createSmtpMailer(smtp.url, 'Marketplace <no-reply@example.test>')
    const deadline = new AbortController()
    const sending = runWithJobSignal(deadline.signal, () => mailer.send(MESSAGE))
    await stalled
    deadline.abort()
    await expect(sending).rejects.toMatchObject({ name: 'AbortError' })
    await closed
    await expect(runWithJobSignal(deadline.signal, () => mailer.send(MESSAGE))).rejects.toMatchObject({ name: 'AbortError' })
    mailer.close()
    expect(smtp.received).toHaveLength(0)
  })
})

describe('a mail job against an SMTP server that hangs', () => {
  let smtp: TestSmtpServer
  let database: Database
  let drop: () => Promise<void>
  const clock = new ManualClock()
  beforeAll(async () => {
    smtp = await startSmtpServer()
    ;({ database, drop } = await openTestDatabase())
  })
  afterAll(async () => {
    ignoreTeardownErrors(database)
    await drop()
    await smtp.close()
  })

  it('stops the send at the job\'s time limit and delivers the mail once, on the retry after the backoff', async () => {
    const mailer = createSmtpMailer(smtp.url, 'Marketplace <no-reply@example.test>')
    const deadlines: AbortController[] = []
    const options = {
      db: database.db,
      clock,
      logger: pino({ level: 'silent' }),
      handlers: { 'test.mail': () => mailer.send(MESSAGE) },
      // The job's timer, fired by the test instead of the wall clock.
      timeoutSignal: () => {
        const deadline = new AbortController()
        deadlines.push(deadline)
        return deadline.signal
      },
    }
    const worker = createWorker(options)
    const another = createWorker(options)
    const [job] = await database.db.transaction(async (tx) => [await createOutbox({ clock }).enqueue(tx, { topic: 'test.mail', payload: {} })])

    smtp.stalling = true
    const stalled = nextCall((callback) => (smtp.onStall = callback))
    const run = worker.runOnce()
    await stalled
    deadlines.at(-1)!.abort()
    expect(await run).toEqual({ processed: 1, failed: 1 })
    const [failed] = await database.db.select().from(outboxJobs).where(eq(outboxJobs.id, job))
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, lockedUntil: null, lastError: expect.stringMatching(/timed out/) })

    // Neither this worker nor another sends it again before its retry is due.
    smtp.stalling = false
    expect(await another.runOnce()).toEqual({ processed: 0, failed: 0 })
    expect(await worker.runOnce()).toEqual({ processed: 0, failed: 0 })
    expect(smtp.received).toHaveLength(0)

    clock.set(failed!.runAt)
    expect(await another.runOnce()).toEqual({ processed: 1, failed: 0 })
    expect(await worker.runOnce()).toEqual({ processed: 0, failed: 0 })
    expect(smtp.received).toHaveLength(1)
    const [done] = await database.db.select().from(outboxJobs).where(eq(outboxJobs.id, job))
    expect(done).toMatchObject({ status: 'done', attempts: 2 })
    mailer.close()
  })
})

describe('SMTP delivery of account mail from the app (SMTP_URL set, no mailer override)', () => {
  let smtp: TestSmtpServer
  let app: FastifyInstance
  let ctx: TestContext
  const clock = new ManualClock()

  beforeAll(async () => {
    smtp = await startSmtpServer()
    const opened = await openTestDatabase()
    const config = testConfig({ SMTP_URL: smtp.url, MAIL_FROM: 'Marketplace <no-reply@app.test>' })
    app = await buildApp({ config, database: opened.database, clock })
    await app.ready()
    ctx = {
      app,
      database: opened.database,
      clock,
      mailer: new MemoryMailer(),
      config,
      async close() {
        await app.close()
        ignoreTeardownErrors(opened.database)
        await opened.drop()
        rmSync(config.dataDir, { recursive: true, force: true })
      },
    }
  })
  afterAll(async () => {
    await ctx?.close()
    await smtp?.close()
  })
  afterEach(() => {
    smtp.received.length = 0
    smtp.rejecting = false
  })

  const resetMailTo = (email: string) => {
    const received = smtp.received.filter((mail) => mail.rcptTo.includes(email))
    expect(received).toHaveLength(1)
    return parseMail(received[0]!.raw)
  }

  it('sends the password-reset mail over SMTP when the worker drains, with a working link', async () => {
    const { user } = await createUser(ctx)
    const asked = await request(app, { method: 'POST', url: '/auth/forgot-password', payload: { email: user.email } })
    expect(asked.statusCode).toBe(200)
    expect(smtp.received).toHaveLength(0)

    expect(await app.container.worker.drain()).toBe(1)

    const mail = resetMailTo(user.email)
    expect(mail.headers.subject).toBe('Reset your password')
    expect(mail.headers.from).toBe('Marketplace <no-reply@app.test>')
    expect(mail.contentType).toMatch(/^multipart\/alternative;/)
    const link = /http:\/\/app\.test\/reset-password\?token=\S+/.exec(mail.text ?? '')?.[0]
    expect(link).toBeDefined()
    expect(mail.html).toContain(`href="${link}"`)

    const token = new URL(link!).searchParams.get('token')
    const reset = await request(app, { method: 'POST', url: '/auth/reset-password', payload: { token, password: 'BrandNew123' } })
    expect(reset.statusCode).toBe(200)
    const login = await request(app, { method: 'POST', url: '/auth/login', payload: { email: user.email, password: 'BrandNew123' } })
    expect(login.statusCode).toBe(200)
  })

  it('keeps the job when the SMTP server refuses it and delivers it on the retry', async () => {
    const { user } = await createUser(ctx)
    expect((await request(app, { method: 'POST', url: '/auth/forgot-password', payload: { email: user.email } })).statusCode).toBe(200)

    smtp.rejecting = true
    expect(await app.container.worker.drain()).toBe(1)
    const [failed] = await ctx.database.db.select().from(outboxJobs).where(eq(outboxJobs.topic, 'mail.password_reset')).orderBy(desc(outboxJobs.createdAt)).limit(1)
    expect(failed).toMatchObject({ status: 'pending', attempts: 1 })
    expect(failed!.lastError).toMatch(/550/)
    expect(smtp.received).toHaveLength(0)

    smtp.rejecting = false
    clock.set(failed!.runAt)
    expect(await app.container.worker.drain()).toBe(1)
    expect(resetMailTo(user.email).headers.subject).toBe('Reset your password')
  })
})

describe('createFileMailer', () => {
  let root: string
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'marketplace-mail-'))
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  function capturingLogger() {
    const lines: Record<string, unknown>[] = []
    const stream = new PassThrough()
    stream.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>)
    })
    return { logger: pino({ level: 'info' }, stream), lines }
  }

  it('writes each message as an .eml file, creating the directory, and logs its links', async () => {
    const dir = join(root, 'nested', 'mail')
    const { logger, lines } = capturingLogger()
    const mailer = createFileMailer(dir, 'Marketplace <no-reply@localhost>', logger)
    await mailer.send(MESSAGE)
    mailer.close()

    const files = readdirSync(dir)
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/\.eml$/)
    const mail = parseMail(readFileSync(join(dir, files[0]!), 'utf8'))
    expect(mail.headers.subject).toBe('Reset your password')
    expect(mail.headers.to).toBe('maria.lopez@example.test')
    expect(mail.headers.from).toBe('Marketplace <no-reply@localhost>')
    expect(mail.text).toContain(LINK)
    expect(mail.html).toContain(`href="${LINK}"`)

    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({
      level: 30,
      to: 'maria.lopez@example.test',
      subject: 'Reset your password',
      file: join(dir, files[0]!),
      links: [LINK],
    })
  })

  it('writes one file per message', async () => {
    const dir = join(root, 'many')
    const { logger } = capturingLogger()
    const mailer = createFileMailer(dir, 'Marketplace <no-reply@localhost>', logger)
    await mailer.send(MESSAGE)
    await mailer.send({ ...MESSAGE, to: 'someone.else@example.test' })
    mailer.close()
    expect(readdirSync(dir)).toHaveLength(2)
  })

  it('is what the app uses without SMTP_URL: activation mail lands under DATA_DIR/mail and its link is logged', async () => {
    const opened = await openTestDatabase()
    const config = testConfig({ LOG_LEVEL: 'info' })
    const logs = new PassThrough()
    const logLines: string[] = []
    logs.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)))
    let app: FastifyInstance | undefined
    try {
      app = await buildApp({ config, database: opened.database, logStream: logs })
      await app.ready()
      const email = `file.mailer.${process.pid}@example.test`
      const registered = await request(app, { method: 'POST', url: '/auth/register', payload: { email, password: 'Secret123', name: 'File Mailer' } })
      expect(registered.statusCode).toBe(201)
      expect(await app.container.worker.drain()).toBe(1)

      const dir = join(config.dataDir, 'mail')
      const files = readdirSync(dir)
      expect(files).toHaveLength(1)
      const mail = parseMail(readFileSync(join(dir, files[0]!), 'utf8'))
      expect(mail.headers.to).toBe(email)
      expect(mail.headers.subject).toBe('Activate your account')
      const link = /http:\/\/app\.test\/activate\?token=\S+/.exec(mail.text ?? '')?.[0]
      expect(link).toBeDefined()

      const logged = logLines.map((line) => JSON.parse(line) as { msg?: string; links?: string[] }).find((line) => line.links)
      expect(logged?.links).toEqual([link])
    } finally {
      await app?.close()
      ignoreTeardownErrors(opened.database)
      await opened.drop()
      rmSync(config.dataDir, { recursive: true, force: true })
    }
  })
})

describe('account mail templates', () => {
  const hostile = { email: 'eve@example.test', fullName: `<script>alert("x")</script> O'Brien & Co` }
  const escapedName = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; O&#39;Brien &amp; Co'

  for (const [name, template, subject, label] of [
    ['activation', activationEmail, 'Activate your account', 'Activate your account'],
    ['password reset', passwordResetEmail, 'Reset your password', 'Choose a new password'],
  ] as const) {
    it(`escapes HTML in the user's name in the ${name} mail and keeps the text part plain`, () => {
      const url = 'http://app.test/path?token=a.b.c&next=<x>'
      const mail = template(hostile, url)
      expect(mail.to).toBe('eve@example.test')
      expect(mail.subject).toBe(subject)
      expect(mail.html).not.toContain('<script>')
      expect(mail.html).toContain(`<p>Hello ${escapedName},</p>`)
      expect(mail.html).toContain(`<a href="http://app.test/path?token=a.b.c&amp;next=&lt;x&gt;">${label}</a>`)
      expect(mail.text).toContain(`Hello ${hostile.fullName},`)
      expect(mail.text).toContain(`${label}: ${url}`)
    })
  }
})
