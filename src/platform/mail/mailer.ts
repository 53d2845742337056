import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import nodemailer from 'nodemailer'
import { newId } from '../../lib/ids.ts'
import { jobSignal } from '../outbox/job-context.ts'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html: string
}

export interface Mailer {
  send(message: MailMessage): Promise<void>
  close(): void
}

/** How long SMTP may take, in ms: each well inside the time of the mail job that sends (15 s by default). */
export interface SmtpTimeouts {
  /** To resolve the server's name. */
  dnsTimeout: number
  /** To open the connection (and TLS, for smtps). */
  connectionTimeout: number
  /** For the server's greeting once connected. */
  greetingTimeout: number
  /** Of silence at any later point (nodemailer's default is 10 minutes). */
  socketTimeout: number
}

export const SMTP_TIMEOUTS: SmtpTimeouts = { dnsTimeout: 5_000, connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000 }

/**
 * Real delivery over SMTP (`smtp://user:pass@host:port`, or `smtps://` for implicit TLS). A
 * timeout given in the URL's query (`?socketTimeout=20000`) wins over ours. Sending for a job, the
 * connection is dropped when the job's time is up (`jobSignal`).
 */
export function createSmtpMailer(url: string, from: string, timeouts: SmtpTimeouts = SMTP_TIMEOUTS): Mailer {
  const transport = nodemailer.createTransport({ url, ...timeouts })
  return {
    async send(message) {
      const signal = jobSignal()
      signal?.throwIfAborted()
      await transport.sendMail({ from, ...message, signal })
    },
    close: () => transport.close(),
  }
}

/**
 * Development delivery: each message becomes an .eml file (open it in any mail client) and its
 * links are logged, so activation and reset work with no mail server at all.
 */
export function createFileMailer(dir: string, from: string, logger: FastifyBaseLogger): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  return {
    async send(message) {
      const info = await transport.sendMail({ from, ...message })
      await mkdir(dir, { recursive: true })
      const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${newId()}.eml`)
      await writeFile(file, info.message as Buffer)
      const links = message.text.match(/https?:\/\/\S+/g) ?? []
      logger.info({ to: message.to, subject: message.subject, file, links }, 'mail written to file (SMTP_URL is not set)')
    },
    close: () => transport.close(),
  }
}

/** SMTP when `SMTP_URL` is set, else `.eml` files in the mail directory. */
export const createMailer = (config: { smtpUrl: string | undefined; from: string; dir: string }, logger: FastifyBaseLogger): Mailer =>
  config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.from) : createFileMailer(config.dir, config.from, logger)
