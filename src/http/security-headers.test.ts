import Fastify, { type FastifyReply } from 'fastify'
import { describe, expect, it } from 'vitest'
import { securityHeadersOf } from './security-headers.ts'

describe('fixed reply headers, set through the public reply API', () => {
  const fixed = { 'api-version': '1', ...securityHeadersOf({ contentSecurityPolicy: { directives: { defaultSrc: ["'self'"] } } }) }

  async function appWith(route: (reply: FastifyReply) => void) {
    const app = Fastify()
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(fixed)
      done()
    })
    app.get('/', async (_request, reply) => {
      route(reply)
      return { ok: true }
    })
    await app.ready()
    return app
  }

  it('sends the fixed headers, and lets a route read, replace and remove one', async () => {
    const app = await appWith((reply) => {
      expect(reply.getHeader('x-frame-options')).toBe('SAMEORIGIN')
      expect(reply.hasHeader('api-version')).toBe(true)
      reply.header('Content-Security-Policy', "default-src 'none'")
      reply.removeHeader('x-dns-prefetch-control')
      reply.header('X-Extra', 'yes')
    })
    const response = await app.inject({ url: '/' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ ok: true })
    expect(response.headers).toMatchObject({
      'api-version': '1',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'content-security-policy': "default-src 'none'",
      'x-extra': 'yes',
      'content-type': 'application/json; charset=utf-8',
    })
    expect(response.headers['x-dns-prefetch-control']).toBeUndefined()
  })
})
