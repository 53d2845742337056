import Fastify, { type FastifyReply } from 'fastify'
import { describe, expect, it } from 'vitest'
import { addAbsentHeaders, addDocumentHeaders, JSON_POLICY, securityHeadersOf, splitDocumentHeaders } from './security-headers.ts'

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

describe('headers only documents act on', () => {
  const helmetSet = securityHeadersOf({ contentSecurityPolicy: { directives: { defaultSrc: ["'self'"] } }, hsts: true })

  it('keeps on every answer what protects any response, and sets the rest apart', () => {
    const { everyAnswer, documentsOnly } = splitDocumentHeaders({ 'api-version': '1', ...helmetSet })
    expect(Object.keys(everyAnswer).sort()).toEqual(['api-version', 'content-security-policy', 'cross-origin-resource-policy', 'strict-transport-security', 'x-content-type-options', 'x-frame-options'])
    expect(everyAnswer['content-security-policy']).toBe(JSON_POLICY)
    expect(Object.keys(documentsOnly).sort()).toEqual([
      'content-security-policy',
      'cross-origin-opener-policy',
      'origin-agent-cluster',
      'referrer-policy',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-permitted-cross-domain-policies',
      'x-xss-protection',
    ])
    // Nothing helmet sets is lost: a document gets the whole, its own policy included.
    expect({ ...everyAnswer, ...documentsOnly }).toEqual({ 'api-version': '1', ...helmetSet })
    expect(documentsOnly['content-security-policy']).toBe(helmetSet['content-security-policy'])
  })

  it('gives a document its own policy in place of the JSON one, keeps a policy a route set, and gives a 304 none', async () => {
    const { everyAnswer, documentsOnly } = splitDocumentHeaders(helmetSet)
    const app = Fastify()
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(everyAnswer)
      done()
    })
    app.addHook('onSend', (_request, reply, payload, done) => {
      addDocumentHeaders(reply, documentsOnly)
      done(null, payload)
    })
    app.get('/page', async (_request, reply) => reply.type('text/html').send('<p>page</p>'))
    app.get('/own', async (_request, reply) => reply.type('text/html').header('content-security-policy', "script-src 'self'").send('<p>own</p>'))
    app.get('/cached', async (_request, reply) => reply.code(304).send())
    const [page, own, cached] = [await app.inject({ url: '/page' }), await app.inject({ url: '/own' }), await app.inject({ url: '/cached' })]
    expect(page.headers['content-security-policy']).toBe(helmetSet['content-security-policy'])
    expect(page.headers['referrer-policy']).toBe('no-referrer')
    expect(own.headers['content-security-policy']).toBe("script-src 'self'")
    // A cache updates the answer it holds with a 304's headers: that answer keeps its own policy.
    expect(cached.statusCode).toBe(304)
    expect(cached.headers['content-security-policy']).toBeUndefined()
  })


  it('adds only the headers an answer does not carry yet', async () => {
    const app = Fastify()
    app.get('/', async (_request, reply) => {
      reply.header('referrer-policy', 'same-origin')
      addAbsentHeaders(reply, { 'referrer-policy': 'no-referrer', 'x-xss-protection': '0' })
      return 'page'
    })
    const response = await app.inject({ url: '/' })
    expect(response.headers['referrer-policy']).toBe('same-origin')
    expect(response.headers['x-xss-protection']).toBe('0')
  })
})
