import type { Writable } from 'node:stream'
import { pino, type Logger } from 'pino'

const SENSITIVE_QUERY = /([?&](?:token|access_token|refresh|refreshToken|password|signature)=)[^&]*/gi

/**
 * A failed query's error (Drizzle's `DrizzleQueryError`) carries the query's parameters in its
 * message, stack and `params`: personal data (identity details, e-mails) and secrets would reach
 * the log with it. The SQL text stays; the values do not.
 */
function errorWithoutQueryParameters(error: unknown): unknown {
  const serialised = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>
  const scrub = (value: unknown) => (typeof value === 'string' ? value.replace(/\nparams: [^\n]*/g, '\nparams: [redacted]') : value)
  if (serialised && typeof serialised === 'object') {
    if ('params' in serialised) serialised.params = '[redacted]'
    serialised.message = scrub(serialised.message)
    serialised.stack = scrub(serialised.stack)
  }
  return serialised
}

/**
 * The process's one logger (JSON lines, pino): the HTTP server, the database pool, the worker and
 * the CLI all write through it. Secrets are redacted wherever they appear.
 */
export function createLogger(options: { level: string }, stream?: Writable): Logger {
  return pino(
    {
      level: options.level,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["sec-websocket-protocol"]',
          'res.headers["set-cookie"]',
          '*.password',
          '*.passwordHash',
          '*.token',
          '*.accessToken',
          '*.refreshToken',
          '*.secret',
          // Identity data (KYC step 1) is personal data: never in a log line, whatever logged it.
          '*.firstName',
          '*.lastName',
          '*.dateOfBirth',
          '*.phone',
        ],
        censor: '[redacted]',
      },
      serializers: {
        err: errorWithoutQueryParameters,
        req: (request: { method: string; url: string; ip: string }) => ({
          method: request.method,
          url: request.url.replace(SENSITIVE_QUERY, '$1[redacted]'),
          remoteAddress: request.ip,
        }),
      },
    },
    stream,
  )
}

export type { Logger }
