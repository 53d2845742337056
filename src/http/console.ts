import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync } from 'fastify'

/** Where `npm run console:build` (run by `npm install`) puts the operator console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist', import.meta.url))

/**
 * The console's own policy: its scripts and styles come from this server only, nothing inline,
 * and it talks to this API only. Images and PDFs (service galleries, identity documents,
 * delivery files) are signed links of this API, also given under its public address.
 */
function consolePolicy(publicUrl: string): string {
  const files = `'self' ${new URL(publicUrl).origin}`
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${files} data: blob:`,
    `object-src ${files}`,
    `frame-src ${files}`,
    "connect-src 'self'",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/**
 * The operator console at /console: its built files, and index.html for every other path under
 * it (the application routes in the browser). Built files carry their content hash in their
 * name, so they are cached for good; index.html is asked again every time.
 */
export const consolePages: FastifyPluginAsync<{ publicUrl: string; root?: string }> = async (app, { publicUrl, root = CONSOLE_DIST }) => {
  const policy = consolePolicy(publicUrl)
  // No rate limit: a page's files are not API traffic, and every API call the page makes is counted.
  const config = { rateLimit: false as const }
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('content-security-policy', policy)
    done()
  })
  if (!existsSync(root)) {
    app.get('/console/*', { config, schema: { hide: true } }, (_request, reply) =>
      reply.code(404).type('text/plain; charset=utf-8').send('The console is not built: run `npm run console:build` (npm install runs it).\n'),
    )
    app.get('/console', { config, schema: { hide: true } }, (_request, reply) => reply.redirect('/console/'))
    return
  }
  await app.register(fastifyStatic, { root, prefix: '/console/', wildcard: false, index: false, maxAge: '365d', immutable: true, schemaHide: true })
  const page = { config, schema: { hide: true } }
  app.get('/console', page, (_request, reply) => reply.redirect('/console/'))
  app.get('/console/*', page, (request, reply) => {
    // A file that is not there is a 404, not the page.
    if (request.url.startsWith('/console/assets/')) return reply.callNotFound()
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false })
  })
}
