import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/** pino's standard levels by rank; `silent` lets nothing through. */
const RANKS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity }

/**
 * A request's logger that becomes the real child logger (the parent's, with the request id bound)
 * only when the request writes a line its level lets through. Fastify makes a child per request;
 * with pino that means serialising and redacting the bindings on every request, which most
 * requests never use: a deployment at `warn` or `error` logs nothing for an answered read. Lines
 * are the same as the child's would be: the first one that passes makes the child, and every
 * later call goes to it. Options of a route's own (`logLevel`) make the child at once.
 */
class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings

  constructor(parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }

  /** The real child, made at the first use that needs it. */
  #real(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings))
  }

  /** The logger a line of `level` goes to, or nothing while the parent's level keeps it out. */
  #to(level: LevelName): FastifyBaseLogger | undefined {
    if (this.#child) return this.#child
    return (RANKS[level] ?? 0) >= (RANKS[this.#parent.level] ?? 0) ? this.#real() : undefined
  }

  get level(): string {
    return (this.#child ?? this.#parent).level
  }

  set level(level: string) {
    this.#real().level = level
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args)
  }
  error(...args: unknown[]): void {
    this.#log('error', args)
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args)
  }
  info(...args: unknown[]): void {
    this.#log('info', args)
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args)
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args)
  }
  silent(): void {}

  #log(level: LevelName, args: unknown[]): void {
    const to = this.#to(level)
    to?.[level](...(args as Parameters<FastifyBaseLogger[LevelName]>))
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options)
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, made lazily unless the route sets options of its own. */
export function requestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return Object.keys(options).length > 0 ? parent.child(bindings, options) : new RequestLogger(parent, bindings)
}
