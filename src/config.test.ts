import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from './config.ts'

const ACCESS = 'access-secret-0123456789-abcdefghijklmnop'
const REFRESH = 'refresh-secret-0123456789-abcdefghijklmnop'
const FILES = 'file-signing-secret-0123456789-abcdefghijklmnop'

let dataDir: string
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'marketplace-config-'))
})
afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

/** Runs loadConfig and returns the ConfigError it throws (fails the test if it does not throw one). */
function configError(source: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(source)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error('loadConfig accepted the configuration')
}

/** The variable each problem is about (every problem line starts with `NAME:`). */
const variablesOf = (error: ConfigError) => error.problems.map((problem) => problem.split(':')[0]).sort()

describe('loadConfig defaults', () => {
  it('serves on 0.0.0.0:8000 with the embedded database under DATA_DIR/db when nothing else is set', () => {
    const config = loadConfig({ DATA_DIR: dataDir })
    expect(config).toMatchObject({
      env: 'development',
      isProduction: false,
      port: 8000,
      host: '0.0.0.0',
      publicUrl: 'http://localhost:8000',
      appUrl: 'http://localhost:8000',
      dataDir,
      database: { kind: 'pglite', dataDir: join(dataDir, 'db') },
      redisUrl: undefined,
      mail: { smtpUrl: undefined, from: 'Marketplace <no-reply@localhost>', dir: join(dataDir, 'mail') },
      corsOrigins: '*',
      trustProxy: false,
      runWorker: true,
      rateLimit: { auth: 5, uploads: 10, general: 100, windowSeconds: 60 },
      realtime: { heartbeatMs: 30_000, maxSocketsPerUser: 10 },
      ledgerPlatformSubAccounts: 16,
      logLevel: 'info',
    })
  })

  it('reads LEDGER_PLATFORM_SUB_ACCOUNTS (default 16) and refuses 0 or a fraction', () => {
    expect(loadConfig({ DATA_DIR: dataDir, LEDGER_PLATFORM_SUB_ACCOUNTS: '4' }).ledgerPlatformSubAccounts).toBe(4)
    expect(() => loadConfig({ DATA_DIR: dataDir, LEDGER_PLATFORM_SUB_ACCOUNTS: '0' })).toThrow(/LEDGER_PLATFORM_SUB_ACCOUNTS/)
    expect(() => loadConfig({ DATA_DIR: dataDir, LEDGER_PLATFORM_SUB_ACCOUNTS: '1.5' })).toThrow(/LEDGER_PLATFORM_SUB_ACCOUNTS/)
  })

  it('reads WS_HEARTBEAT_SECONDS in seconds and refuses 0', () => {
    expect(loadConfig({ DATA_DIR: dataDir, WS_HEARTBEAT_SECONDS: '5' }).realtime.heartbeatMs).toBe(5000)
    expect(() => loadConfig({ DATA_DIR: dataDir, WS_HEARTBEAT_SECONDS: '0' })).toThrow(/WS_HEARTBEAT_SECONDS/)
  })

  it('reads WS_MAX_SOCKETS_PER_USER (default 10) and refuses 0 or a fraction', () => {
    expect(loadConfig({ DATA_DIR: dataDir, WS_MAX_SOCKETS_PER_USER: '3' }).realtime.maxSocketsPerUser).toBe(3)
    for (const value of ['0', '2.5']) expect(() => loadConfig({ DATA_DIR: dataDir, WS_MAX_SOCKETS_PER_USER: value })).toThrow(/WS_MAX_SOCKETS_PER_USER/)
  })

  it('treats empty variables as unset', () => {
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '', DATABASE_URL: '', LOG_LEVEL: '', RATE_LIMIT_AUTH: '' })
    expect(config.port).toBe(8000)
    expect(config.database.kind).toBe('pglite')
    expect(config.logLevel).toBe('info')
    expect(config.rateLimit.auth).toBe(5)
  })

  it('derives PUBLIC_URL from PORT when PUBLIC_URL is not set', () => {
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '9123' })
    expect(config.port).toBe(9123)
    expect(config.publicUrl).toBe('http://localhost:9123')
    expect(config.appUrl).toBe('http://localhost:9123')
  })

  it('strips trailing slashes from PUBLIC_URL and APP_URL, and APP_URL falls back to PUBLIC_URL', () => {
    expect(loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: 'https://api.example.com/' })).toMatchObject({
      publicUrl: 'https://api.example.com',
      appUrl: 'https://api.example.com',
    })
    expect(loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: 'https://api.example.com', APP_URL: 'https://www.example.com//' }).appUrl).toBe(
      'https://www.example.com',
    )
  })

  it('selects PostgreSQL when DATABASE_URL is set', () => {
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://user:pass@db.internal:5432/marketplace' })
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://user:pass@db.internal:5432/marketplace', poolSize: 10 })
    expect(loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgresql://db/marketplace', DATABASE_POOL_SIZE: '6' }).database).toMatchObject({ kind: 'postgres', poolSize: 6 })
    expect(variablesOf(configError({ DATA_DIR: dataDir, DATABASE_URL: 'postgresql://db/marketplace', DATABASE_POOL_SIZE: '0' }))).toEqual(['DATABASE_POOL_SIZE'])
  })

  it('reads the boolean switches, the rate limits and the SMTP URL', () => {
    const config = loadConfig({
      DATA_DIR: dataDir,
      TRUST_PROXY: 'true',
      RUN_WORKER: 'false',
      RATE_LIMIT_AUTH: '7',
      RATE_LIMIT_UPLOADS: '11',
      RATE_LIMIT_GENERAL: '250',
      RATE_LIMIT_WINDOW_SECONDS: '30',
      SMTP_URL: 'smtps://user:pass@mail.example.com:465',
      LOG_LEVEL: 'warn',
    })
    expect(config).toMatchObject({
      trustProxy: true,
      runWorker: false,
      rateLimit: { auth: 7, uploads: 11, general: 250, windowSeconds: 30 },
      mail: { smtpUrl: 'smtps://user:pass@mail.example.com:465' },
      logLevel: 'warn',
    })
  })
})

describe('loadConfig CORS_ORIGINS', () => {
  it('allows every origin with *', () => {
    expect(loadConfig({ DATA_DIR: dataDir, CORS_ORIGINS: '*' }).corsOrigins).toBe('*')
  })

  it('splits a comma list and trims each origin', () => {
    expect(loadConfig({ DATA_DIR: dataDir, CORS_ORIGINS: 'https://a.example.com, https://b.example.com ,,' }).corsOrigins).toEqual([
      'https://a.example.com',
      'https://b.example.com',
    ])
  })

  it('treats a list that contains * as every origin', () => {
    expect(loadConfig({ DATA_DIR: dataDir, CORS_ORIGINS: 'https://a.example.com,*' }).corsOrigins).toBe('*')
  })
})

describe('loadConfig RESPONSE_ENVELOPE', () => {
  it('wraps answers by default, answers bare with none, and refuses anything else by name', () => {
    expect(loadConfig({ DATA_DIR: dataDir }).responseEnvelope).toBe('wrapped')
    expect(loadConfig({ DATA_DIR: dataDir, RESPONSE_ENVELOPE: 'none' }).responseEnvelope).toBe('none')
    expect(variablesOf(configError({ DATA_DIR: dataDir, RESPONSE_ENVELOPE: 'bare' }))).toEqual(['RESPONSE_ENVELOPE'])
  })
})

describe('loadConfig validation', () => {
  it('reports every bad variable in one ConfigError, each by name', () => {
    const error = configError({ DATA_DIR: dataDir, PORT: 'abc', RATE_LIMIT_AUTH: '0', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' })
    expect(variablesOf(error)).toEqual(['DATABASE_URL', 'LOG_LEVEL', 'PORT', 'RATE_LIMIT_AUTH'])
    for (const name of ['PORT', 'RATE_LIMIT_AUTH', 'DATABASE_URL', 'LOG_LEVEL']) expect(error.message).toContain(`${name}:`)
    expect(error.message).toContain('"abc"')
    expect(error.message).toContain('"mysql://x"')
    expect(error.name).toBe('ConfigError')
  })

  it('refuses unknown NODE_ENV, boolean and URL values', () => {
    const error = configError({
      DATA_DIR: dataDir,
      NODE_ENV: 'staging',
      TRUST_PROXY: 'yes',
      REDIS_URL: 'http://redis',
      SMTP_URL: 'mail.example.com',
      PUBLIC_URL: 'ftp://example.com',
    })
    expect(variablesOf(error)).toEqual(['NODE_ENV', 'PUBLIC_URL', 'REDIS_URL', 'SMTP_URL', 'TRUST_PROXY'])
  })

  it('refuses a port above 65535 and a rate limit above the maximum', () => {
    expect(variablesOf(configError({ DATA_DIR: dataDir, PORT: '70000', RATE_LIMIT_GENERAL: '1000001' }))).toEqual(['PORT', 'RATE_LIMIT_GENERAL'])
  })

  it('refuses fractional numbers instead of silently truncating them', () => {
    expect(variablesOf(configError({ DATA_DIR: dataDir, PORT: '8080.5', RATE_LIMIT_AUTH: '2.5' }))).toEqual(['PORT', 'RATE_LIMIT_AUTH'])
  })
})

const PRODUCTION = { NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.test:587', FILE_SIGNING_SECRET: FILES }

describe('loadConfig JWT secrets', () => {
  it('requires SMTP_URL in production, where mail in files would put reset links in the log', () => {
    const error = configError({ DATA_DIR: dataDir, NODE_ENV: 'production', JWT_ACCESS_SECRET: ACCESS, JWT_REFRESH_SECRET: REFRESH, FILE_SIGNING_SECRET: FILES })
    expect(variablesOf(error)).toEqual(['SMTP_URL'])
  })

  it('requires both secrets in production and names both', () => {
    const error = configError({ DATA_DIR: dataDir, ...PRODUCTION })
    expect(variablesOf(error)).toEqual(['JWT_ACCESS_SECRET', 'JWT_REFRESH_SECRET'])
    expect(error.message).toContain('JWT_ACCESS_SECRET')
    expect(error.message).toContain('JWT_REFRESH_SECRET')
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(false)
  })

  it('names only the missing secret in production', () => {
    expect(variablesOf(configError({ DATA_DIR: dataDir, ...PRODUCTION, JWT_ACCESS_SECRET: ACCESS }))).toEqual(['JWT_REFRESH_SECRET'])
  })

  it('reports missing production secrets together with the other bad variables', () => {
    const error = configError({ DATA_DIR: dataDir, ...PRODUCTION, PORT: 'abc' })
    expect(variablesOf(error)).toEqual(['JWT_ACCESS_SECRET', 'JWT_REFRESH_SECRET', 'PORT'])
  })

  it('accepts two distinct secrets in production and writes nothing to DATA_DIR', () => {
    const config = loadConfig({ DATA_DIR: dataDir, ...PRODUCTION, JWT_ACCESS_SECRET: ACCESS, JWT_REFRESH_SECRET: REFRESH })
    expect(config.isProduction).toBe(true)
    expect(config.jwt).toEqual({ accessSecret: ACCESS, refreshSecret: REFRESH })
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(false)
  })

  it('refuses equal access and refresh secrets', () => {
    for (const NODE_ENV of ['production', 'development']) {
      const error = configError({ DATA_DIR: dataDir, NODE_ENV, SMTP_URL: PRODUCTION.SMTP_URL, FILE_SIGNING_SECRET: FILES, JWT_ACCESS_SECRET: ACCESS, JWT_REFRESH_SECRET: ACCESS })
      expect(variablesOf(error)).toEqual(['JWT_REFRESH_SECRET'])
      expect(error.message).toMatch(/must differ/)
    }
  })

  it('refuses secrets shorter than 32 characters', () => {
    const error = configError({ DATA_DIR: dataDir, ...PRODUCTION, JWT_ACCESS_SECRET: 'a'.repeat(31), JWT_REFRESH_SECRET: 'too-short' })
    expect(variablesOf(error)).toEqual(['JWT_ACCESS_SECRET', 'JWT_REFRESH_SECRET'])
    expect(configError({ DATA_DIR: dataDir, JWT_ACCESS_SECRET: 'short' }).message).toContain('JWT_ACCESS_SECRET')
  })

  it('generates distinct secrets in development, keeps them in DATA_DIR/secrets.json and reuses them on the next start', () => {
    const first = loadConfig({ DATA_DIR: dataDir })
    expect(first.jwt.accessSecret.length).toBeGreaterThanOrEqual(32)
    expect(first.jwt.refreshSecret.length).toBeGreaterThanOrEqual(32)
    expect(first.jwt.accessSecret).not.toBe(first.jwt.refreshSecret)

    const file = join(dataDir, 'secrets.json')
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ ...first.jwt, fileSigningSecret: first.fileSigning.secret })
    // The file holds signing keys: readable by the owner only.
    expect(statSync(file).mode & 0o077).toBe(0)

    const second = loadConfig({ DATA_DIR: dataDir })
    expect(second.jwt).toEqual(first.jwt)

    const elsewhere = mkdtempSync(join(tmpdir(), 'marketplace-config-'))
    try {
      expect(loadConfig({ DATA_DIR: elsewhere }).jwt.accessSecret).not.toBe(first.jwt.accessSecret)
    } finally {
      rmSync(elsewhere, { recursive: true, force: true })
    }
  })

  it('replaces an unreadable secrets file with fresh secrets', () => {
    writeFileSync(join(dataDir, 'secrets.json'), 'not json')
    const config = loadConfig({ DATA_DIR: dataDir })
    expect(JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'))).toEqual({ ...config.jwt, fileSigningSecret: config.fileSigning.secret })
  })

  it('prefers secrets from the environment over the stored ones in development', () => {
    const stored = loadConfig({ DATA_DIR: dataDir }).jwt
    expect(loadConfig({ DATA_DIR: dataDir, JWT_ACCESS_SECRET: ACCESS, JWT_REFRESH_SECRET: REFRESH }).jwt).toEqual({
      accessSecret: ACCESS,
      refreshSecret: REFRESH,
    })
    expect(loadConfig({ DATA_DIR: dataDir, JWT_ACCESS_SECRET: ACCESS }).jwt).toEqual({ accessSecret: ACCESS, refreshSecret: stored.refreshSecret })
  })
})

describe('loadConfig S3 storage', () => {
  it('takes the bucket, its endpoint and the public address presigned downloads use', () => {
    const config = loadConfig({ DATA_DIR: dataDir, S3_BUCKET: 'files', S3_ENDPOINT: 'http://minio:9000', S3_PUBLIC_ENDPOINT: 'https://files.example.test' })
    expect(config.storage).toMatchObject({ kind: 's3', bucket: 'files', endpoint: 'http://minio:9000', publicEndpoint: 'https://files.example.test', forcePathStyle: true })
    expect(variablesOf(configError({ DATA_DIR: dataDir, S3_BUCKET: 'files', S3_PUBLIC_ENDPOINT: 'files.example.test' }))).toEqual(['S3_PUBLIC_ENDPOINT'])
  })
})

describe('loadConfig file signing secret', () => {
  const JWT = { JWT_ACCESS_SECRET: ACCESS, JWT_REFRESH_SECRET: REFRESH }

  it('requires FILE_SIGNING_SECRET in production, with the JWT secrets set', () => {
    expect(variablesOf(configError({ DATA_DIR: dataDir, ...PRODUCTION, ...JWT, FILE_SIGNING_SECRET: undefined }))).toEqual(['FILE_SIGNING_SECRET'])
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(false)
  })

  it('takes it, and its previous value during a rotation, apart from the JWT secrets', () => {
    const previous = `previous-${FILES}`
    const config = loadConfig({ DATA_DIR: dataDir, ...PRODUCTION, ...JWT, FILE_SIGNING_SECRET_PREVIOUS: previous })
    expect(config.fileSigning).toEqual({ secret: FILES, previousSecret: previous })
    expect(config.jwt).toMatchObject({ accessSecret: ACCESS, refreshSecret: REFRESH })
  })

  it('refuses one shorter than 32 characters, or equal to a JWT secret', () => {
    expect(variablesOf(configError({ DATA_DIR: dataDir, ...PRODUCTION, ...JWT, FILE_SIGNING_SECRET: 'x'.repeat(31) }))).toEqual(['FILE_SIGNING_SECRET'])
    for (const same of [ACCESS, REFRESH]) {
      const error = configError({ DATA_DIR: dataDir, ...PRODUCTION, ...JWT, FILE_SIGNING_SECRET: same })
      expect(variablesOf(error)).toEqual(['FILE_SIGNING_SECRET'])
      expect(error.message).toMatch(/must differ from the JWT secrets/)
    }
  })

  it('generates its own in development, kept beside the JWT secrets, and adds it to a secrets file that lacks it', () => {
    const generated = loadConfig({ DATA_DIR: dataDir, ...JWT })
    expect(generated.fileSigning.secret.length).toBeGreaterThanOrEqual(32)
    expect([ACCESS, REFRESH]).not.toContain(generated.fileSigning.secret)
    expect(loadConfig({ DATA_DIR: dataDir }).fileSigning.secret).toBe(generated.fileSigning.secret)

    const file = join(dataDir, 'secrets.json')
    const { fileSigningSecret: _dropped, ...older } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>
    writeFileSync(file, JSON.stringify(older))
    const upgraded = loadConfig({ DATA_DIR: dataDir })
    expect(upgraded.jwt).toMatchObject(older)
    expect(upgraded.fileSigning.secret).not.toBe(generated.fileSigning.secret)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ ...older, fileSigningSecret: upgraded.fileSigning.secret })
  })
})

describe('loadConfig webhooks', () => {
  const SECRET = 'whsec_c3RhdGljLWVuZHBvaW50LXNlY3JldC0wMTIzNDU2Nzg5'

  it('has no static endpoint by default and allows private networks outside production only', () => {
    expect(loadConfig({ DATA_DIR: dataDir }).webhooks).toEqual({ url: undefined, secret: undefined, allowPrivateNetworks: true })
    const production = loadConfig({ DATA_DIR: dataDir, ...PRODUCTION, JWT_ACCESS_SECRET: ACCESS, JWT_REFRESH_SECRET: REFRESH })
    expect(production.webhooks.allowPrivateNetworks).toBe(false)
    expect(loadConfig({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }).webhooks.allowPrivateNetworks).toBe(false)
  })

  it('reads the static endpoint', () => {
    expect(loadConfig({ DATA_DIR: dataDir, WEBHOOK_URL: 'https://hooks.example.com/in', WEBHOOK_SECRET: SECRET }).webhooks).toMatchObject({ url: 'https://hooks.example.com/in', secret: SECRET })
  })

  it('refuses a URL without its secret, with credentials or of another scheme, and a secret not in whsec_ form', () => {
    expect(variablesOf(configError({ DATA_DIR: dataDir, WEBHOOK_URL: 'https://hooks.example.com/in' }))).toEqual(['WEBHOOK_SECRET'])
    expect(variablesOf(configError({ DATA_DIR: dataDir, WEBHOOK_URL: 'https://u:p@hooks.example.com/in', WEBHOOK_SECRET: SECRET }))).toEqual(['WEBHOOK_URL'])
    expect(variablesOf(configError({ DATA_DIR: dataDir, WEBHOOK_URL: 'ftp://hooks.example.com/in', WEBHOOK_SECRET: SECRET }))).toContain('WEBHOOK_URL')
    expect(variablesOf(configError({ DATA_DIR: dataDir, WEBHOOK_SECRET: 'plain-secret' }))).toEqual(['WEBHOOK_SECRET'])
    expect(variablesOf(configError({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'yes' }))).toEqual(['WEBHOOK_ALLOW_PRIVATE_NETWORKS'])
  })
})

describe('order settings', () => {
  it('defaults to a 10 % fee, 3 days to auto-complete and 2 to answer a request, reads decimals, and refuses values out of range by name', () => {
    expect(loadConfig({ DATA_DIR: dataDir }).orders).toEqual({ platformFeeBasisPoints: 1000, autoCompleteAfterMs: 3 * 24 * 3600 * 1000, requestExpiresAfterMs: 2 * 24 * 3600 * 1000 })
    expect(loadConfig({ DATA_DIR: dataDir, PLATFORM_FEE_PERCENT: '2.5', ORDER_AUTO_COMPLETE_DAYS: '0.5', ORDER_REQUEST_DAYS: '0.001' }).orders).toEqual({
      platformFeeBasisPoints: 250,
      autoCompleteAfterMs: 12 * 3600 * 1000,
      requestExpiresAfterMs: 86_400,
    })
    expect(variablesOf(configError({ DATA_DIR: dataDir, PLATFORM_FEE_PERCENT: '101', ORDER_AUTO_COMPLETE_DAYS: '0', ORDER_REQUEST_DAYS: '0.0009' }))).toEqual(['ORDER_AUTO_COMPLETE_DAYS', 'ORDER_REQUEST_DAYS', 'PLATFORM_FEE_PERCENT'])
    expect(variablesOf(configError({ DATA_DIR: dataDir, PLATFORM_FEE_PERCENT: 'ten' }))).toEqual(['PLATFORM_FEE_PERCENT'])
  })
})

describe('tip and worker settings', () => {
  it('defaults to 14 days without a fee and a 60-second tick, reads fractions of a day, and refuses values out of range by name', () => {
    const defaults = loadConfig({ DATA_DIR: dataDir })
    expect(defaults.tips).toEqual({ windowMs: 14 * 24 * 3600 * 1000, feeBasisPoints: 0 })
    expect(defaults.workerTickMs).toBe(60_000)
    const short = loadConfig({ DATA_DIR: dataDir, TIP_DAYS: '0.0005', TIP_FEE_PERCENT: '5', WORKER_TICK_SECONDS: '2' })
    expect(short.tips).toEqual({ windowMs: 43_200, feeBasisPoints: 500 })
    expect(short.workerTickMs).toBe(2000)
    expect(variablesOf(configError({ DATA_DIR: dataDir, TIP_DAYS: '0', TIP_FEE_PERCENT: '100.5', WORKER_TICK_SECONDS: '0.5' }))).toEqual(['TIP_DAYS', 'TIP_FEE_PERCENT', 'WORKER_TICK_SECONDS'])
  })
})

describe('notification settings', () => {
  it('keeps notifications 90 days by default, reads fractions of a day, and refuses values out of range by name', () => {
    expect(loadConfig({ DATA_DIR: dataDir }).notifications).toEqual({ retentionMs: 90 * 24 * 3600 * 1000 })
    expect(loadConfig({ DATA_DIR: dataDir, NOTIFICATION_RETENTION_DAYS: '0.25' }).notifications).toEqual({ retentionMs: 6 * 3600 * 1000 })
    expect(variablesOf(configError({ DATA_DIR: dataDir, NOTIFICATION_RETENTION_DAYS: '0' }))).toEqual(['NOTIFICATION_RETENTION_DAYS'])
    expect(variablesOf(configError({ DATA_DIR: dataDir, NOTIFICATION_RETENTION_DAYS: 'forever' }))).toEqual(['NOTIFICATION_RETENTION_DAYS'])
  })
})

describe('review window and seller levels', () => {
  it('defaults to a 10-day review window, a daily evaluation over 60 days and the documented thresholds; reads fractions', () => {
    const defaults = loadConfig({ DATA_DIR: dataDir })
    expect(defaults.reviews).toEqual({ windowMs: 10 * 24 * 3600 * 1000 })
    expect(defaults.sellerLevels).toEqual({
      evaluationMs: 24 * 3600 * 1000,
      windowMs: 60 * 24 * 3600 * 1000,
      thresholds: {
        level_one: { accountDays: 60, completedOrders: 10, rating: 4.7, onTimePercent: 90, completionPercent: 90 },
        level_two: { accountDays: 120, completedOrders: 50, rating: 4.7, onTimePercent: 90, completionPercent: 90 },
        top_rated: { accountDays: 180, completedOrders: 100, rating: 4.8, onTimePercent: 95, completionPercent: 95 },
      },
    })
    const short = loadConfig({ DATA_DIR: dataDir, REVIEW_WINDOW_DAYS: '0.001', SELLER_LEVEL_EVALUATION_HOURS: '0.5', SELLER_LEVEL_WINDOW_DAYS: '30.5', SELLER_LEVEL_MIN_RATING: '4,4.25,4.9' })
    expect(short.reviews.windowMs).toBe(86_400)
    expect(short.sellerLevels).toMatchObject({ evaluationMs: 1_800_000, windowMs: 30.5 * 24 * 3600 * 1000 })
    expect([short.sellerLevels.thresholds.level_one.rating, short.sellerLevels.thresholds.level_two.rating, short.sellerLevels.thresholds.top_rated.rating]).toEqual([4, 4.25, 4.9])
  })

  it('refuses windows out of range, a triple that is malformed, above its maximum, fractional where orders are counted, or decreasing, each by name', () => {
    expect(variablesOf(configError({ DATA_DIR: dataDir, REVIEW_WINDOW_DAYS: '0', SELLER_LEVEL_EVALUATION_HOURS: '0', SELLER_LEVEL_WINDOW_DAYS: 'sixty' }))).toEqual([
      'REVIEW_WINDOW_DAYS',
      'SELLER_LEVEL_EVALUATION_HOURS',
      'SELLER_LEVEL_WINDOW_DAYS',
    ])
    expect(variablesOf(configError({ DATA_DIR: dataDir, SELLER_LEVEL_MIN_RATING: '4.7,4.8' }))).toEqual(['SELLER_LEVEL_MIN_RATING'])
    const problems = configError({
      DATA_DIR: dataDir,
      SELLER_LEVEL_MIN_RATING: '4,5,5.5',
      SELLER_LEVEL_MIN_ON_TIME_PERCENT: '90,101,101',
      SELLER_LEVEL_MIN_COMPLETED_ORDERS: '10,50.5,100',
      SELLER_LEVEL_MIN_ACCOUNT_DAYS: '60,30,180',
    })
    expect(variablesOf(problems)).toEqual(['SELLER_LEVEL_MIN_ACCOUNT_DAYS', 'SELLER_LEVEL_MIN_COMPLETED_ORDERS', 'SELLER_LEVEL_MIN_ON_TIME_PERCENT', 'SELLER_LEVEL_MIN_RATING'])
    expect(problems.problems.find((problem) => problem.startsWith('SELLER_LEVEL_MIN_ACCOUNT_DAYS'))).toContain('each at least the one before')
  })
})

describe('clearance settings', () => {
  it('defaults to 7 days, reads fractions down to 0.001, takes 0 as no clearance, and refuses anything else by name', () => {
    expect(loadConfig({ DATA_DIR: dataDir }).clearanceAfterMs).toBe(7 * 24 * 3600 * 1000)
    expect(loadConfig({ DATA_DIR: dataDir, CLEARANCE_DAYS: '0.001' }).clearanceAfterMs).toBe(86_400)
    expect(loadConfig({ DATA_DIR: dataDir, CLEARANCE_DAYS: '0' }).clearanceAfterMs).toBe(0)
    for (const days of ['0.0005', '-1', '366', 'seven']) expect(variablesOf(configError({ DATA_DIR: dataDir, CLEARANCE_DAYS: days }))).toEqual(['CLEARANCE_DAYS'])
  })
})

describe('the first administrator (SUPERUSER_*)', () => {
  it('reads the e-mail, password and full name as given', () => {
    const config = loadConfig({ DATA_DIR: dataDir, SUPERUSER_EMAIL: 'root@example.test', SUPERUSER_PASSWORD: 'Sup3r-secret', SUPERUSER_FULL_NAME: 'Site Admin' })
    expect(config.superuser).toEqual({ email: 'root@example.test', password: 'Sup3r-secret', fullName: 'Site Admin' })
  })

  it('stops the start naming each bad variable, never echoing the password', () => {
    const error = configError({ DATA_DIR: dataDir, SUPERUSER_EMAIL: 'root-at-localhost', SUPERUSER_PASSWORD: 'weakpass', SUPERUSER_FULL_NAME: 'X' })
    expect(variablesOf(error)).toEqual(['SUPERUSER_EMAIL', 'SUPERUSER_FULL_NAME', 'SUPERUSER_PASSWORD'])
    expect(error.problems).toContain('SUPERUSER_PASSWORD: must be 8 to 128 characters and contain an uppercase letter, a lowercase letter and a digit')
    expect(error.message).not.toContain('weakpass')
  })

  it('needs the e-mail and the password together', () => {
    expect(configError({ DATA_DIR: dataDir, SUPERUSER_EMAIL: 'root@example.test' }).problems).toEqual(['SUPERUSER_PASSWORD: required with SUPERUSER_EMAIL'])
    expect(configError({ DATA_DIR: dataDir, SUPERUSER_PASSWORD: 'Sup3r-secret' }).problems).toEqual(['SUPERUSER_EMAIL: required with SUPERUSER_PASSWORD'])
  })
})
