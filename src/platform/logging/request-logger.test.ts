import { Writable } from 'node:stream'
import Fastify, { LogController } from 'fastify'
import { describe, expect, it, vi } from 'vitest'
import { createLogger } from './logger.ts'
import { requestLogger } from './request-logger.ts'

function capture(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const parent = createLogger({ level }, stream)
  return { parent, lines }
}

describe("a request's logger", () => {
  it('makes no child while nothing it is asked to write passes the level', () => {
    const { parent, lines } = capture('warn')
    const child = vi.spyOn(parent, 'child')
    const log = requestLogger(parent, { requestId: 'r-1' }, {})
    log.info({ detail: 1 }, 'not written')
    log.debug('not written either')
    log.trace('nor this')
    log.silent('silent writes nothing')
    expect(child).not.toHaveBeenCalled()
    expect(lines).toEqual([])
    expect(log.level).toBe('warn')
  })

  it('writes what passes the level as the child would, with the request id bound, and makes the child once', () => {
    const { parent, lines } = capture('info')
    const child = vi.spyOn(parent, 'child')
    const log = requestLogger(parent, { requestId: 'r-2' }, {})
    log.debug('below the level')
    log.info({ detail: 1 }, 'first %s', 'line')
    log.error(new Error('boom'), 'second')
    log.warn('third')
    expect(child).toHaveBeenCalledTimes(1)
    expect(lines.map((line) => [line.level, line.requestId, line.msg])).toEqual([
      [30, 'r-2', 'first line'],
      [50, 'r-2', 'second'],
      [40, 'r-2', 'third'],
    ])
    expect(lines[0]).toMatchObject({ detail: 1 })
    expect(lines[1]).toMatchObject({ err: { message: 'boom' } })
  })

  it('redacts in its lines as the parent does', () => {
    const { parent, lines } = capture('info')
    requestLogger(parent, { requestId: 'r-3' }, {}).info({ body: { password: 'hunter22', token: 't0k3n' } }, 'body')
    expect(JSON.stringify(lines)).not.toMatch(/hunter22|t0k3n/)
    expect(lines[0]).toMatchObject({ requestId: 'r-3', body: { password: '[redacted]' } })
  })

  it('takes a level of its own, and gives children that carry both bindings', () => {
    const { parent, lines } = capture('warn')
    const log = requestLogger(parent, { requestId: 'r-4' }, {})
    log.level = 'debug'
    expect(log.level).toBe('debug')
    expect(parent.level).toBe('warn')
    log.debug('now written')
    log.child({ step: 'upload' }).warn('from a child')
    expect(lines.map((line) => [line.msg, line.requestId, line.step])).toEqual([
      ['now written', 'r-4', undefined],
      ['from a child', 'r-4', 'upload'],
    ])
  })

  it("makes the child at once for a route's own options, so a route's log level holds", async () => {
    const { parent, lines } = capture('warn')
    const app = Fastify({ loggerInstance: parent, childLoggerFactory: requestLogger, logController: new LogController({ disableRequestLogging: true }) })
    app.get('/verbose', { logLevel: 'debug' }, async (request) => {
      request.log.debug('route detail')
      return { ok: true }
    })
    app.get('/quiet', async (request) => {
      request.log.debug('not written')
      request.log.warn('written')
      return { ok: true }
    })
    await app.inject({ url: '/verbose' })
    await app.inject({ url: '/quiet' })
    await app.close()
    expect(lines.map((line) => line.msg)).toEqual(['route detail', 'written'])
    expect(lines.every((line) => typeof line.reqId === 'string')).toBe(true)
  })
})
