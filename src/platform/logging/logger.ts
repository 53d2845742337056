import type { Writable } from 'node:stream'
import { pino, type Logger } from 'pino'

const SENSITIVE_QUERY = /([?&](?:token|access_token|refresh|refreshToken|password|signature)=)[^&]*/gi

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
        ],
        censor: '[redacted]',
      },
      serializers: {
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
