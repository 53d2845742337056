import { randomUUID } from 'node:crypto'
import type { Writable } from 'node:stream'
import cors from '@fastify/cors'
import multipart from '@fastify/multipart'
import helmet from '@fastify/helmet'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Redis } from 'ioredis'
import type { Config } from './config.ts'
import { pingDatabase, type Database } from './db/client.ts'
import { identifyCaller } from './http/auth-hooks.ts'
import { API_PREFIX } from './http/prefix.ts'
import { errorHandler, notFoundHandler } from './http/error-handler.ts'
import { rateLimits } from './http/rate-limit.ts'
import { validatorCompiler } from './http/validation.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { createMailer, type Mailer } from './platform/mail/mailer.ts'
import { adminRoutes } from './modules/admin/admin.routes.ts'
import { authRoutes } from './modules/auth/auth.routes.ts'
import { healthRoutes } from './modules/health/health.routes.ts'
import { rolesRoutes } from './modules/roles/roles.routes.ts'
import { usersRoutes } from './modules/users/users.routes.ts'
import { portfolioRoutes } from './modules/portfolio/portfolio.routes.ts'
import { servicesRoutes } from './modules/catalogue/services.routes.ts'
import { categoriesRoutes } from './modules/catalogue/categories.routes.ts'
import { MAX_UPLOAD_BYTES } from './modules/uploads/upload-rules.ts'
import { uploadsRoutes } from './modules/uploads/uploads.routes.ts'
import { createStorage } from './platform/storage/create-storage.ts'
import type { StorageDriver } from './platform/storage/storage.ts'
import { createServices, type Services } from './services.ts'


export interface AppDeps {
  config: Config
  database: Database
  clock?: Clock
  mailer?: Mailer
  storage?: StorageDriver
  /** Where logs go (default stdout); tests pass a stream to read them. */
  logStream?: Writable
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/
const SENSITIVE_QUERY = /([?&](?:token|access_token|refresh|refreshToken|password|signature)=)[^&]*/gi

const loggerOptions = (config: Config, stream?: Writable): FastifyServerOptions['logger'] => ({
  level: config.logLevel,
  ...(stream && { stream }),
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
    req: (request) => ({
      method: request.method,
      url: request.url.replace(SENSITIVE_QUERY, '$1[redacted]'),
      remoteAddress: request.ip,
    }),
  },
})

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database } = deps
  const clock = deps.clock ?? systemClock

  const app = Fastify({
    logger: loggerOptions(config, deps.logStream),
    trustProxy: config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Path parameters are bounded by the route schemas, which answer 404 in the usual envelope.
    maxParamLength: 2048,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
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

  const mailer = deps.mailer ?? createMailer(config.mail, app.log)
  const storage = deps.storage ?? createStorage(config.storage)
  const services = createServices({ config, db: database.db, clock, mailer, storage, logger: app.log })
  app.decorate('services', services)
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false }) : undefined
  redis?.on('error', (error) => app.log.warn({ err: error }, 'redis error'))

  app.setValidatorCompiler(validatorCompiler)
  app.setErrorHandler(errorHandler)

  app.addHook('onRequest', async (request, reply) => {
    reply.header('API-Version', '1')
    reply.header('X-Request-Id', request.id)
  })

  await app.register(helmet, {
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
  })
  await app.register(cors, {
    origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: ['X-Request-Id', 'API-Version', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
    maxAge: 600,
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Marketplace API',
        version: '1.0.0',
        description:
          'REST/JSON API of a freelance-services marketplace. Every answer is `{ success, data }` or `{ success: false, error: { code, message, details } }`.',
      },
      servers: [{ url: config.publicUrl }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
  })

  await app.register(multipart, {
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 20, fieldSize: 4096, parts: 30, headerPairs: 100 },
  })
  await app.register(identifyCaller, { auth: services.auth })
  await app.register(rateLimits, {
    limits: { auth: config.rateLimit.auth, uploads: config.rateLimit.uploads, general: config.rateLimit.general },
    windowSeconds: config.rateLimit.windowSeconds,
    redis,
  })

  await app.register(healthRoutes, { ping: () => pingDatabase(database.db) })
  await app.register(
    async (api) => {
      await api.register(authRoutes, { auth: services.auth })
      await api.register(usersRoutes, { users: services.users, tmpDir: config.tmpDir })
      await api.register(uploadsRoutes, { uploads: services.uploads, tmpDir: config.tmpDir })
      await api.register(portfolioRoutes, { portfolio: services.portfolio })
      await api.register(rolesRoutes, { roles: services.roles })
      await api.register(categoriesRoutes, { categories: services.categories })
      await api.register(adminRoutes, { admin: services.admin })
      await api.register(servicesRoutes, { services: services.catalogueServices, tmpDir: config.tmpDir })
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
    },
    { prefix: API_PREFIX },
  )
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { deepLinking: true } })

  app.setNotFoundHandler({ preHandler: app.rateLimit() }, notFoundHandler)

  app.addHook('onReady', async () => {
    if (config.runWorker) services.worker.start()
    // Count from the first request: until Redis answers, the limiter would let requests through.
    if (redis && redis.status !== 'ready') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000)
        redis.once('ready', () => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  })

  // While closing, answers tell keep-alive clients to go, so their idle sockets do not hold the
  // shutdown open until the keep-alive timeout.
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('Connection', 'close')
  })
  app.addHook('onClose', async () => {
    await services.worker.stop()
    mailer.close()
    redis?.disconnect()
  })

  return app
}
