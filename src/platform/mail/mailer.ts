import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import nodemailer from 'nodemailer'
import { newId } from '../../lib/ids.ts'

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

/** Real delivery over SMTP (`smtp://user:pass@host:port`, or `smtps://` for implicit TLS). */
export function createSmtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url)
  return {
    async send(message) {
      await transport.sendMail({ from, ...message })
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
