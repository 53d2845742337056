import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consolePages } from '../../src/http/console.ts'
import { createTestApp, type TestContext } from '../setup/test-app.ts'

const INDEX = '<!doctype html><html lang="en"><head><script type="module" src="/console/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>'

describe('the operator console at /console', () => {
  let dist: string
  let app: FastifyInstance
  let bare: FastifyInstance

  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'console-dist-'))
    mkdirSync(join(dist, 'assets'))
    writeFileSync(join(dist, 'index.html'), INDEX)
    writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log("console")\n')
    app = Fastify()
    await app.register(consolePages, { publicUrl: 'https://market.example.com', root: dist })
    bare = Fastify()
    await bare.register(consolePages, { publicUrl: 'https://market.example.com', root: join(dist, 'missing') })
  })
  afterAll(async () => {
    await Promise.all([app.close(), bare.close()])
    rmSync(dist, { recursive: true, force: true })
  })

  it('serves index.html at /console/ and at every path of the application, asked again each time', async () => {
    for (const url of ['/console/', '/console/users', '/console/kyc/0190a000-0000-7000-8000-00000000abcd']) {
      const response = await app.inject({ url })
      expect(response.statusCode, url).toBe(200)
      expect(response.headers['content-type']).toMatch(/^text\/html/)
      expect(response.headers['cache-control']).toBe('no-cache')
      expect(response.body).toBe(INDEX)
    }
    const bareRoot = await app.inject({ url: '/console' })
    expect(bareRoot.statusCode).toBe(302)
    expect(bareRoot.headers.location).toBe('/console/')
  })

  it('serves the built files, cached for good, and answers 404 for a file that is not there', async () => {
    const asset = await app.inject({ url: '/console/assets/index-abc123.js' })
    expect(asset.statusCode).toBe(200)
    expect(asset.headers['content-type']).toMatch(/javascript/)
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect((await app.inject({ url: '/console/assets/index-gone.js' })).statusCode).toBe(404)
  })

  it('sends its own policy: scripts and styles from this server only, nothing inline, no other origin but the public address for files', async () => {
    const policy = String((await app.inject({ url: '/console/' })).headers['content-security-policy'])
    const directives = new Map(policy.split('; ').map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]))
    expect(directives.get('script-src')).toEqual(["'self'"])
    expect(directives.get('style-src')).toEqual(["'self'"])
    expect(directives.get('connect-src')).toEqual(["'self'"])
    expect(directives.get('default-src')).toEqual(["'self'"])
    expect(directives.get('frame-ancestors')).toEqual(["'none'"])
    expect(directives.get('img-src')).toEqual(["'self'", 'https://market.example.com', 'data:', 'blob:'])
    expect(policy).not.toContain('unsafe')
  })

  it('says how to build it when it is not built', async () => {
    const response = await bare.inject({ url: '/console/' })
    expect(response.statusCode).toBe(404)
    expect(response.body).toContain('npm run console:build')
  })

  describe('in the API', () => {
    let ctx: TestContext
    beforeAll(async () => {
      ctx = await createTestApp()
    })
    afterAll(() => ctx.close())

    it('is routed at /console with the policy of its own, and stays out of the API reference', async () => {
      const response = await ctx.app.inject({ url: '/console' })
      expect(response.statusCode).toBe(302)
      expect(response.headers['content-security-policy']).toContain("style-src 'self';")
      const api = await ctx.app.inject({ url: '/api/v1/health' })
      expect(api.headers['content-security-policy']).not.toContain("base-uri 'none'")
      const document = (await ctx.app.inject({ url: '/api/v1/openapi.json' })).json<{ paths: Record<string, unknown> }>()
      expect(Object.keys(document.paths).filter((path) => path.includes('console'))).toEqual([])
    })
  })
})
