import { randomUUID } from 'node:crypto'
import type { Writable } from 'node:stream'
import cors from '@fastify/cors'
import multipart from '@fastify/multipart'
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import websocket from '@fastify/websocket'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify'
import { Redis } from 'ioredis'
import packageInfo from '../package.json' with { type: 'json' }
import type { Config } from './config.ts'
import { pingDatabase, type Database } from './db/client.ts'
import { identifyCaller } from './http/auth-hooks.ts'
import { idempotency } from './platform/idempotency/idempotency.ts'
import { API_PREFIX } from './http/prefix.ts'
import { polishDocument } from './http/openapi.ts'
import { badUrlHandler, errorHandler, notFoundHandler } from './http/error-handler.ts'
import { objectBodiesOnly } from './http/json-body.ts'
import { isJsonAnswer, shapeAnswer, wrappedAnswer, type EnvelopeShape } from './http/envelope.ts'
import { bodyLimitOf, refuseMultipartOnJsonRoutes } from './http/multipart.ts'
import { shareInputRules } from './http/route-schemas.ts'
import { drainBoundFor, drainUnreadBody } from './http/unread-body.ts'
import { RateLimitCounter, rateLimits } from './http/rate-limit.ts'
import { addDocumentHeaders, securityHeadersOf, splitDocumentHeaders } from './http/security-headers.ts'
import { validatorCompiler } from './http/validation.ts'
import { MINUTE, systemClock, type Clock } from './lib/clock.ts'
import { limitPasswordHashing } from './lib/passwords.ts'
import type { ErrorCode } from './lib/errors.ts'
import { requestLogger } from './platform/logging/request-logger.ts'
import { createLogger, type Logger } from './platform/logging/logger.ts'
import { createMailer, type Mailer } from './platform/mail/mailer.ts'
import { apiIndexRoutes, healthRoutes } from './http/health.routes.ts'
import { metricsPlugin } from './http/metrics.ts'
import { consolePages } from './http/console.ts'
import { poolGauges } from './db/pool-metrics.ts'
import { MAX_UPLOAD_BYTES } from './modules/uploads/uploads.module.ts'
import { webhooksDocument } from './modules/webhooks/webhooks.module.ts'
import { sweepStaging } from './platform/staging/staging.ts'
import { createRealtimeHub } from './platform/realtime/create-hub.ts'
import type { RealtimeHub } from './platform/realtime/realtime.ts'
import { createStorage } from './platform/storage/create-storage.ts'
import type { StorageDriver } from './platform/storage/storage.ts'
import { createContainer, type Container } from './container.ts'

export interface AppDeps {
  config: Config
  database: Database
  clock?: Clock
  mailer?: Mailer
  storage?: StorageDriver
  /** Realtime delivery; built from the config (Redis when `REDIS_URL` is set) when absent. */
  realtime?: RealtimeHub
  /** The process's logger (server.ts shares it with the database pool); built from the config when absent. */
  logger?: Logger
  /** Where logs go (default stdout) when no logger is given; tests pass a stream to read them. */
  logStream?: Writable
}

declare module 'fastify' {
  interface FastifyInstance {
    container: Container
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/

/** The largest frame a chat socket takes from a client; a bigger one ends the socket (1009). */
const WS_MAX_PAYLOAD = 64 * 1024

/**
 * An error on an open chat socket. A client that breaks the protocol (a frame over the size
 * limit, a bad opcode: `ws` codes `WS_ERR_*`) is the client's doing, not a fault here: a warning
 * without a stack, and `ws` is left to close the socket with the code that says why (1009 for a
 * frame too big). Anything else is a fault of ours, logged as such.
 */
function socketErrorHandler(error: Error & { code?: unknown }, socket: { terminate(): void }, request: FastifyRequest): void {
  const code = typeof error.code === 'string' ? error.code : undefined
  if (code?.startsWith('WS_ERR_')) {
    request.log.warn({ code, reason: error.message, maxPayload: WS_MAX_PAYLOAD }, 'websocket: a client broke the protocol; its socket is closed')
    return
  }
  request.log.error({ err: error }, 'websocket: socket error')
  socket.terminate()
}

/** How the introduction states the shape of answers, and how to ask for the other one. */
function envelopeDescription(shape: EnvelopeShape): string[] {
  const wrapped = 'Every answer is `{ success: true, data }` or `{ success: false, error: { code, message, details } }`'
  const bare = 'Every answer is the payload itself, a page is `{ results, count, page, pages, hasNext, hasPrev, ... }` (`count`: all items), and an error is `{ error: { code, message, details } }` with the same status'
  return shape === 'wrapped'
    ? [
        `REST/JSON API of a freelance-services marketplace. ${wrapped}, as this reference shows them.`,
        '',
        `**Bare answers.** Send \`Prefer: envelope=none\` (RFC 7240) on any request to get the other shape: ${bare.charAt(0).toLowerCase()}${bare.slice(1)}. Such an answer carries \`Preference-Applied: envelope=none\`; every answer carries \`Vary: Prefer\`. Both shapes are accepted on input everywhere.`,
      ]
    : [
        `REST/JSON API of a freelance-services marketplace. On this deployment (\`RESPONSE_ENVELOPE=none\`) ${bare.charAt(0).toLowerCase()}${bare.slice(1)}, as this reference shows them.`,
        '',
        `**Wrapped answers.** Send \`Prefer: envelope=wrapped\` (RFC 7240) to get the other shape: ${wrapped.charAt(0).toLowerCase()}${wrapped.slice(1)}. Such an answer carries \`Preference-Applied: envelope=wrapped\`; every answer carries \`Vary: Prefer\`.`,
      ]
}

/** The reference's introduction, with every error code a client may switch on (from each module's catalogue). */
function apiDescription(errors: ErrorCode[], shape: EnvelopeShape): string {
  const rows = errors.map((error) => `| \`${error.code}\` | ${error.status} | ${error.description} |`)
  return [
    ...envelopeDescription(shape),
    '',
    'A query parameter the operation does not list is refused (400 naming it), as is a string holding a NUL character; a method the path does not have is 405 `METHOD_NOT_ALLOWED` with `Allow` listing the ones it has.',
    '',
    '## Error codes',
    '',
    '| code | status | meaning |',
    '|---|---|---|',
    ...rows,
  ].join('\n')
}

/** The server: its logger, limits, request ids and content types (JSON and multipart only). */
function createFastify(config: Config, logger: FastifyBaseLogger) {
  const app = Fastify({
    loggerInstance: logger,
    trustProxy: config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Path parameters are bounded by the route schemas, which answer 404 in the usual envelope.
    routerOptions: { maxParamLength: 2048 },
    // A path that does not even decode (`%E0%A4%A`) names nothing: 404 in the envelope, like any unknown path.
    frameworkErrors: badUrlHandler(config.responseEnvelope, splitDocumentHeaders(fixedHeadersOf(config)).everyAnswer),
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    // A request's child logger is made only when the request logs a line its level lets through.
    childLoggerFactory: requestLogger,
    // Honour a well-formed id from a proxy so one id follows the request across services.
    genReqId: (request) => {
      const incoming = request.headers['x-request-id']
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    ajv: { customOptions: { strict: false } },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>()
  // The API speaks JSON (and multipart for files): a text/plain body is 415, not a string to validate.
  app.removeContentTypeParser('text/plain')
  objectBodiesOnly(app)
  return app
}

/** The headers a browser may read from an answer to another origin. */
const EXPOSED_HEADERS = ['X-Request-Id', 'API-Version', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed', 'Preference-Applied', 'Allow'].join(', ')

/**
 * The headers that never change: the API version, `Vary`, helmet's security headers
 * (`splitDocumentHeaders` says which every answer carries), and the CORS headers of an answer
 * when every origin is allowed (decision 0249).
 */
function fixedHeadersOf(config: Config) {
  return {
    'api-version': '1',
    // An answer's shape follows the request's `Prefer` header (http/envelope.ts): caches keep one per value.
    vary: 'Prefer',
    ...(config.corsOrigins === '*' && { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS }),
    ...securityHeadersOf({
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          objectSrc: ["'none'"],
          frameAncestors: ["'none'"],
          // Local development is plain HTTP; upgrading would break the /docs page there.
          upgradeInsecureRequests: config.isProduction ? [] : null,
        },
      },
      hsts: config.isProduction,
      crossOriginResourcePolicy: { policy: 'cross-origin' },
    }),
  }
}

/** The OpenAPI document: its introduction with the error codes, the server, the security scheme and the webhooks. */
function swaggerOptions(config: Config, container: Container): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Marketplace API',
        version: packageInfo.version,
        license: { name: 'MIT', identifier: 'MIT' },
        description: apiDescription(container.errors, config.responseEnvelope),
      },
      servers: [{ url: config.publicUrl, description: `${config.isProduction ? 'Production' : config.env === 'test' ? 'Test' : 'Local development'} server: this deployment (PUBLIC_URL).` }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'The `accessToken` from `POST /auth/login` (HS256, 15 minutes). Tokens follow RFC8725 (JWT best current practices): the algorithm is pinned and each kind of token is accepted only where it belongs.',
          },
        },
      },
      // What receivers get: one entry per event of the catalogue (OpenAPI 3.1 webhooks).
      webhooks: webhooksDocument(container.events),
    },
    transformObject: (document) =>
      'openapiObject' in document
        ? polishDocument(document.openapiObject, { maxUploadBytes: MAX_UPLOAD_BYTES, bareAnswers: config.responseEnvelope === 'none' })
        : document.swaggerObject,
  }
}

/** Resolves when Redis is connected or has refused the connection, or after 5 seconds. */
function settled(redis: Redis): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      redis.off('ready', done).off('error', done)
      resolve()
    }
    const timer = setTimeout(done, 5000)
    redis.once('ready', done).once('error', done)
  })
}

type App = ReturnType<typeof createFastify>

/**
 * The hooks of every request, added before any plugin: the headers every answer carries, the
 * refusal of multipart bodies on JSON routes, and how answers end the connection while closing.
 */
function addRequestHooks(app: App, config: Config): void {
  const { everyAnswer, documentsOnly } = splitDocumentHeaders(fixedHeadersOf(config))
  // First hook, and the only one for what every answer carries: the headers that never change
  // and the request id, through Fastify's public `reply.headers()` (decision 0135). Hooks on every
  // request take a callback rather than return a promise: one
  // less per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(everyAnswer)
    reply.header('x-request-id', request.id)
    done()
  })
  // Only where a body may be read: Fastify reads none for GET and HEAD. A route's own hooks
  // (authentication, permissions) run first, as they do before a JSON body is validated.
  app.addHook('onRoute', (route) => {
    if ([route.method].flat().every((method) => method === 'GET' || method === 'HEAD')) return
    route.preValidation = [refuseMultipartOnJsonRoutes, ...[route.preValidation ?? []].flat()]
  })
  // While closing, answers tell keep-alive clients to go, so their idle sockets do not hold the
  // shutdown open until the keep-alive timeout. An answer sent before the body was read to its
  // end (a refusal) drains the rest, up to a bound, so that the client reads it. An answer that
  // is not JSON (a page, a file, an empty answer) gets the headers only documents act on
  // (decision 0236).
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!isJsonAnswer(reply)) addDocumentHeaders(reply, documentsOnly)
    if (closing) reply.header('Connection', 'close')
    else if (!request.raw.complete) drainUnreadBody(request, reply, drainBoundFor(bodyLimitOf(request)))
    done(null, payload)
  })
}

/** The platform's plugins, before any route: CORS, the OpenAPI document, multipart bodies, sockets, the caller's identity, rate limits and idempotency. */
async function registerPlatformPlugins(app: App, deps: { config: Config; container: Container; clock: Clock; redis: Redis | undefined; rateLimitCounter: RateLimitCounter }): Promise<void> {
  const { config, container, clock, redis, rateLimitCounter } = deps
  const corsOptions = {
    origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // One string, not a list the plugin joins again on every request.
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  }
  // Every origin allowed: an answer's CORS headers are among the fixed ones, and the plugin, in a
  // context of its own, answers the preflight requests alone (decision 0249). A list of origins is
  // matched against each request's.
  if (config.corsOrigins === '*') await app.register(async (preflight) => preflight.register(cors, corsOptions))
  else await app.register(cors, corsOptions)

  await app.register(swagger, swaggerOptions(config, container))

  await app.register(multipart, {
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 20, fieldSize: 4096, parts: 30, headerPairs: 100 },
  })
  // Before the caller is identified: the upgrade request is marked (`request.ws`) so that the
  // browser's subprotocol token is read there (a browser cannot set headers on a WebSocket, decision
  // 0052); the reply names `bearer`.
  await app.register(websocket, {
    options: {
      maxPayload: WS_MAX_PAYLOAD,
      handleProtocols: (protocols) => (protocols.has('bearer') ? 'bearer' : false),
    },
    errorHandler: socketErrorHandler,
  })
  await app.register(identifyCaller, { authenticate: (token) => container.auth.authenticate(token), verifyAccess: (token) => container.auth.verifyAccess(token) })
  await app.register(rateLimits, {
    limits: { auth: config.rateLimit.auth, uploads: config.rateLimit.uploads, general: config.rateLimit.general },
    windowSeconds: config.rateLimit.windowSeconds,
    redis,
    logger: app.log,
    counter: rateLimitCounter,
  })

  // After authentication and rate limits, before any route: routes opt in with `config: { idempotent: true }`.
  await app.register(idempotency, { db: container.db, clock, producedAnswer: wrappedAnswer })
}

/** Metrics, health, every module's routes (at the root and under the API prefix), the API reference and the console. */
async function registerRoutes(app: App, deps: { config: Config; container: Container; database: Database; rateLimitCounter: RateLimitCounter }): Promise<void> {
  const { config, container, database, rateLimitCounter } = deps
  container.metrics.addGauges(poolGauges(database))
  // Production serves metrics only behind a token; elsewhere they are open for a local Prometheus.
  await app.register(metricsPlugin, { metrics: container.metrics, token: config.metricsToken ?? (config.isProduction ? null : undefined) })
  await app.register(healthRoutes, { ping: () => pingDatabase(database.db), rateLimits: () => rateLimitCounter.state })
  for (const install of container.routes('root')) await install(app)
  await app.register(
    async (api) => {
      for (const install of container.routes('api')) await install(api)
      await api.register(apiIndexRoutes, { publicUrl: config.publicUrl, version: packageInfo.version })
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
    },
    { prefix: API_PREFIX },
  )
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { deepLinking: true } })
  await app.register(consolePages, { publicUrl: config.publicUrl })
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database } = deps
  const clock = deps.clock ?? systemClock
  const logger: FastifyBaseLogger = deps.logger ?? createLogger({ level: config.logLevel }, deps.logStream)
  const app = createFastify(config, logger)

  const mailer = deps.mailer ?? createMailer(config.mail, app.log)
  const storage = deps.storage ?? createStorage(config.storage)
  const realtime = deps.realtime ?? createRealtimeHub({ redisUrl: config.redisUrl, ...config.realtime, logger: app.log })
  const container = createContainer({ config, db: database.db, clock, mailer, storage, logger: app.log, realtime })
  app.decorate('container', container)
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false }) : undefined
  // Connection errors are reported by the rate-limit counter, once a minute, not once per retry.
  redis?.on('error', () => undefined)
  const rateLimitCounter = new RateLimitCounter(redis, app.log)

  app.setValidatorCompiler(validatorCompiler)
  app.setErrorHandler(errorHandler)
  shareInputRules(app)

  addRequestHooks(app, config)
  limitPasswordHashing(config.passwordHashConcurrency)

  await registerPlatformPlugins(app, { config, container, clock, redis, rateLimitCounter })
  await registerRoutes(app, { config, container, database, rateLimitCounter })

  app.setNotFoundHandler({ preHandler: app.rateLimit() }, notFoundHandler)

  // Staging files are local to this process's disk, whichever process runs the worker: each API
  // process sweeps what a crash left behind, at start and then every quarter of an hour.
  const sweepStagingFiles = () =>
    sweepStaging(config.tmpDir)
      .then((removed) => removed > 0 && app.log.info({ removed }, 'removed abandoned upload staging files'))
      .catch((error: unknown) => app.log.warn({ err: error }, 'could not sweep upload staging files'))
  const stagingSweep = setInterval(() => void sweepStagingFiles(), 15 * MINUTE).unref()

  app.addHook('onReady', async () => {
    await storage.ready?.()
    await sweepStagingFiles()
    await realtime.start()
    if (config.runWorker) container.worker.start()
    // Count in Redis from the first request when it is there; a Redis that refuses the connection
    // is not waited for (the counter falls back to this process meanwhile).
    if (redis && redis.status !== 'ready') await settled(redis)
  })

  // Last of the onSend hooks (after idempotency stores the answer, wrapped): every answer leaves
  // in the envelope the request prefers.
  app.addHook('onSend', (request, reply, payload, done) => {
    done(null, shapeAnswer(request, reply, payload, config.responseEnvelope))
  })
  app.addHook('onClose', async () => {
    clearInterval(stagingSweep)
    await realtime.close()
    await container.worker.stop()
    mailer.close()
    redis?.disconnect()
  })

  return app
}
