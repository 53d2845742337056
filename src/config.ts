import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { defaultHashConcurrency } from './lib/passwords.ts'
import { Email, FullName, Password } from './modules/users/account-fields.ts'

const DAY_MS = 24 * 3600 * 1000
const Bool = Type.Union([Type.Literal('true'), Type.Literal('false')])
const Url = (protocols: string) => Type.String({ pattern: `^(${protocols})://\\S+$` })
const Count = (fallback: number) => Type.Integer({ minimum: 1, maximum: 1_000_000, default: fallback })
/** Three numbers, for level_one, level_two and top_rated: `60,120,180`. */
const LevelTriple = (fallback: string) => Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?,[0-9]+(\\.[0-9]+)?,[0-9]+(\\.[0-9]+)?$', default: fallback })

/** Every environment variable the service reads, with its default. The only reader of process.env. */
const EnvSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], { default: 'development' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8000 }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0' }),
  PUBLIC_URL: Url('https?'),
  APP_URL: Type.Optional(Url('https?')),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Url('postgres|postgresql')),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  REDIS_URL: Type.Optional(Url('redis|rediss')),
  JWT_ACCESS_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  JWT_REFRESH_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  JWT_ACCESS_SECRET_PREVIOUS: Type.Optional(Type.String({ minLength: 32 })),
  JWT_REFRESH_SECRET_PREVIOUS: Type.Optional(Type.String({ minLength: 32 })),
  FILE_SIGNING_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  FILE_SIGNING_SECRET_PREVIOUS: Type.Optional(Type.String({ minLength: 32 })),
  SMTP_URL: Type.Optional(Url('smtp|smtps')),
  MAIL_FROM: Type.String({ minLength: 3, default: 'Marketplace <no-reply@localhost>' }),
  S3_BUCKET: Type.Optional(Type.String({ minLength: 3, maxLength: 63 })),
  S3_ENDPOINT: Type.Optional(Url('https?')),
  S3_PUBLIC_ENDPOINT: Type.Optional(Url('https?')),
  S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  S3_FORCE_PATH_STYLE: Type.Optional(Bool),
  SIGNED_URL_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 7 * 24 * 3600, default: 3600 }),
  CORS_ORIGINS: Type.String({ default: '*' }),
  RESPONSE_ENVELOPE: Type.Union([Type.Literal('wrapped'), Type.Literal('none')], { default: 'wrapped' }),
  TRUST_PROXY: Bool,
  RUN_WORKER: Bool,
  PASSWORD_HASH_CONCURRENCY: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  RATE_LIMIT_AUTH: Count(5),
  RATE_LIMIT_UPLOADS: Count(10),
  RATE_LIMIT_GENERAL: Count(100),
  RATE_LIMIT_WINDOW_SECONDS: Count(60),
  CURRENCY: Type.String({ pattern: '^[A-Z]{3}$', default: 'USD' }),
  MIN_PAYOUT: Type.Number({ minimum: 0.01, maximum: 1_000_000, default: 10 }),
  LEDGER_PLATFORM_SUB_ACCOUNTS: Type.Integer({ minimum: 1, maximum: 1024, default: 16 }),
  PLATFORM_FEE_PERCENT: Type.Number({ minimum: 0, maximum: 100, default: 10 }),
  ORDER_AUTO_COMPLETE_DAYS: Type.Number({ minimum: 0.001, maximum: 365, default: 3 }),
  ORDER_REQUEST_DAYS: Type.Number({ minimum: 0.001, maximum: 365, default: 2 }),
  TIP_DAYS: Type.Number({ minimum: 0.0001, maximum: 365, default: 14 }),
  TIP_FEE_PERCENT: Type.Number({ minimum: 0, maximum: 100, default: 0 }),
  CLEARANCE_DAYS: Type.Number({ minimum: 0, maximum: 365, default: 7 }),
  WORKER_TICK_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  NOTIFICATION_RETENTION_DAYS: Type.Number({ minimum: 0.001, maximum: 3650, default: 90 }),
  REVIEW_WINDOW_DAYS: Type.Number({ minimum: 0.001, maximum: 365, default: 10 }),
  SELLER_LEVEL_EVALUATION_HOURS: Type.Number({ minimum: 0.001, maximum: 8760, default: 24 }),
  SELLER_LEVEL_WINDOW_DAYS: Type.Number({ minimum: 0.001, maximum: 3650, default: 60 }),
  SELLER_LEVEL_MIN_ACCOUNT_DAYS: LevelTriple('60,120,180'),
  SELLER_LEVEL_MIN_COMPLETED_ORDERS: LevelTriple('10,50,100'),
  SELLER_LEVEL_MIN_RATING: LevelTriple('4.7,4.7,4.8'),
  SELLER_LEVEL_MIN_ON_TIME_PERCENT: LevelTriple('90,90,95'),
  SELLER_LEVEL_MIN_COMPLETION_PERCENT: LevelTriple('90,90,95'),
  PAYMENTS_PROVIDER: Type.Union([Type.Literal('sandbox')], { default: 'sandbox' }),
  PAYMENTS_SANDBOX_ENABLED: Type.Optional(Bool),
  SUPERUSER_EMAIL: Type.Optional(Type.String()),
  SUPERUSER_PASSWORD: Type.Optional(Type.String()),
  SUPERUSER_FULL_NAME: Type.Optional(Type.String()),
  WEBHOOK_URL: Type.Optional(Url('https?')),
  WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9+/]{22,}={0,2}$' })),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Optional(Bool),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  WS_HEARTBEAT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  WS_MAX_SOCKETS_PER_USER: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)), { default: 'info' }),
})

type Env = Static<typeof EnvSchema>

export type StorageConfig =
  | { kind: 'local'; dir: string }
  | { kind: 's3'; bucket: string; region: string; endpoint?: string; publicEndpoint?: string; accessKeyId?: string; secretAccessKey?: string; forcePathStyle: boolean }

export type DatabaseConfig = { kind: 'postgres'; url: string; poolSize: number } | { kind: 'pglite'; dataDir: string }

export interface Config {
  env: Env['NODE_ENV']
  isProduction: boolean
  port: number
  host: string
  publicUrl: string
  appUrl: string
  dataDir: string
  database: DatabaseConfig
  redisUrl: string | undefined
  /** Signing secrets; the previous ones are only accepted, during a rotation (docs/operations.md). */
  jwt: { accessSecret: string; refreshSecret: string; previousAccessSecret?: string; previousRefreshSecret?: string }
  mail: { smtpUrl: string | undefined; from: string; dir: string }
  storage: StorageConfig
  /** Where uploads are staged while they are checked, before they reach storage. */
  tmpDir: string
  signedUrlTtlSeconds: number
  /** The key of signed links to private files, apart from the token keys; the previous one is only accepted, during a rotation. */
  fileSigning: { secret: string; previousSecret?: string }
  corsOrigins: string[] | '*'
  /** The shape of answers when the request states no `Prefer: envelope=...`: `{ success, data }`, or the payload bare (docs/decisions/0121). */
  responseEnvelope: 'wrapped' | 'none'
  trustProxy: boolean
  runWorker: boolean
  rateLimit: { auth: number; uploads: number; general: number; windowSeconds: number }
  /** Argon2 hashes computed at once; more wait (default: half the cores, at least one). */
  passwordHashConcurrency: number
  /** ISO 4217 code of the platform currency; money is stored in its minor unit (cents). */
  currency: string
  /** The sandbox credits deposits without collecting money: on outside production, opt-in in production. */
  payments: { provider: 'sandbox'; sandboxEnabled: boolean }
  /** The smallest payout, in cents. */
  minPayoutCents: number
  /** How many sub-accounts each platform account is spread over (decision 0186). */
  ledgerPlatformSubAccounts: number
  /**
   * Webhooks (decisions 0061, 0062): the static endpoint of `WEBHOOK_URL`, signed with `WEBHOOK_SECRET`, and
   * whether destinations in private networks are allowed (outside production by default).
   */
  webhooks: { url: string | undefined; secret: string | undefined; allowPrivateNetworks: boolean }
  /**
   * Orders: the platform's share of a completed order in basis points (10 % = 1000), how long after the latest delivery an undecided
   * order completes by itself, and how long a request between the parties stays open unanswered.
   */
  orders: { platformFeeBasisPoints: number; autoCompleteAfterMs: number; requestExpiresAfterMs: number }
  /** Tips on completed orders: how long after completion the buyer may tip, and the platform's share in basis points. */
  tips: { windowMs: number; feeBasisPoints: number }
  /** How long a seller's earning (an order's, a tip's) stays clearing before it becomes available; 0: available at once. */
  clearanceAfterMs: number
  /** How often the worker runs its periodic checks (auto-completion, offer expiry, unanswered order requests, clearance, review publication). */
  workerTickMs: number
  /** Notifications: how long they are kept before the worker deletes them. */
  notifications: { retentionMs: number }
  /** Two-way reviews: how long after an order's completion its parties may review it; the reviews stay hidden until both are in or this has passed. */
  reviews: { windowMs: number }
  /** Seller levels (docs/seller-levels.md): how often the worker evaluates them, the span of the recent figures, and what each level needs. */
  sellerLevels: { evaluationMs: number; windowMs: number; thresholds: Record<RankedSellerLevel, LevelThresholds> }
  /** Realtime sockets: how often each is pinged; one that missed the previous ping is dropped. */
  realtime: { heartbeatMs: number; maxSocketsPerUser: number }
  logLevel: Env['LOG_LEVEL']
  /** Bearer token that `GET /metrics` requires; without it metrics are open outside production and off in production. */
  metricsToken: string | undefined
  /**
   * The first administrator: created at start when no superuser exists, never changed afterwards
   * (README "The first administrator"); also the fallbacks for `cli create-superuser`'s flags.
   */
  superuser: { email?: string; password?: string; fullName?: string }
}

/** The levels above `new`, lowest first. */
export const rankedSellerLevels = ['level_one', 'level_two', 'top_rated'] as const
export type RankedSellerLevel = (typeof rankedSellerLevels)[number]

/** What a seller needs to hold a level; each figure is at least the one of the level below. */
export interface LevelThresholds {
  accountDays: number
  completedOrders: number
  /** Average rating, 1 to 5. */
  rating: number
  onTimePercent: number
  completionPercent: number
}

const LEVEL_VARIABLES = {
  accountDays: { name: 'SELLER_LEVEL_MIN_ACCOUNT_DAYS', max: 3650, whole: false },
  completedOrders: { name: 'SELLER_LEVEL_MIN_COMPLETED_ORDERS', max: 1_000_000, whole: true },
  rating: { name: 'SELLER_LEVEL_MIN_RATING', max: 5, whole: false },
  onTimePercent: { name: 'SELLER_LEVEL_MIN_ON_TIME_PERCENT', max: 100, whole: false },
  completionPercent: { name: 'SELLER_LEVEL_MIN_COMPLETION_PERCENT', max: 100, whole: false },
} as const satisfies Record<keyof LevelThresholds, { name: keyof Env; max: number; whole: boolean }>

const levelTriples = (env: Env) =>
  (Object.entries(LEVEL_VARIABLES) as [keyof LevelThresholds, (typeof LEVEL_VARIABLES)[keyof LevelThresholds]][]).map(([key, variable]) => ({
    key,
    variable,
    raw: env[variable.name],
    values: env[variable.name].split(',').map(Number),
  }))

/**
 * What is wrong with the level thresholds (`10,50,100`: level_one, level_two, top_rated). A level
 * that asked less than the one below would be reached by skipping it, so no triple may decrease.
 */
function sellerLevelProblems(env: Env): string[] {
  return levelTriples(env).flatMap(({ variable, raw, values }) => {
    // A malformed triple was reported by its pattern.
    if (values.length !== 3 || values.some(Number.isNaN)) return []
    const why = values.some((value) => value > variable.max)
      ? `each value at most ${variable.max}`
      : variable.whole && values.some((value) => !Number.isInteger(value))
        ? 'whole numbers'
        : values.some((value, index) => index > 0 && value < values[index - 1]!)
          ? 'level_one, level_two, top_rated, each at least the one before'
          : undefined
    return why ? [`${variable.name}: must be ${why} (got ${JSON.stringify(raw)})`] : []
  })
}

/** The review window and the seller level settings, from variables already checked. */
function reviewSettings(env: Env): Pick<Config, 'reviews' | 'sellerLevels'> {
  const triples = levelTriples(env)
  const levelAt = (index: number) => Object.fromEntries(triples.map(({ key, values }) => [key, values[index]!])) as unknown as LevelThresholds
  return {
    reviews: { windowMs: Math.round(env.REVIEW_WINDOW_DAYS * DAY_MS) },
    sellerLevels: {
      evaluationMs: Math.round(env.SELLER_LEVEL_EVALUATION_HOURS * 3600 * 1000),
      windowMs: Math.round(env.SELLER_LEVEL_WINDOW_DAYS * DAY_MS),
      thresholds: { level_one: levelAt(0), level_two: levelAt(1), top_rated: levelAt(2) },
    },
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

const DEFAULTS: Record<string, string> = {
  TRUST_PROXY: 'false',
  RUN_WORKER: 'true',
}

/** Rules between variables, and what production requires besides the schema. */
function crossVariableProblems(env: Env): string[] {
  const problems: string[] = []
  if (env.NODE_ENV === 'production') {
    for (const name of ['JWT_ACCESS_SECRET', 'JWT_REFRESH_SECRET', 'FILE_SIGNING_SECRET'] as const) {
      if (!env[name]) problems.push(`${name}: required when NODE_ENV=production (at least 32 characters)`)
    }
    // Without SMTP, mail goes to files and its links (reset tokens) to the log: development only.
    if (!env.SMTP_URL) problems.push('SMTP_URL: required when NODE_ENV=production')
  }
  // 0 turns clearance off; any other window is at least the 0.001 day (86.4 s) every *_DAYS setting allows.
  if (env.CLEARANCE_DAYS > 0 && env.CLEARANCE_DAYS < 0.001) problems.push(`CLEARANCE_DAYS: must be 0 or from 0.001 to 365 (got ${JSON.stringify(env.CLEARANCE_DAYS)})`)
  if (env.WEBHOOK_URL && !env.WEBHOOK_SECRET) problems.push('WEBHOOK_SECRET: required with WEBHOOK_URL (a whsec_ secret, base64 of at least 16 bytes)')
  if (env.WEBHOOK_URL && hasCredentials(env.WEBHOOK_URL)) problems.push('WEBHOOK_URL: must not carry credentials (user:password@)')
  if (env.JWT_ACCESS_SECRET && env.JWT_ACCESS_SECRET === env.JWT_REFRESH_SECRET) problems.push('JWT_REFRESH_SECRET: must differ from JWT_ACCESS_SECRET')
  if (env.FILE_SIGNING_SECRET && [env.JWT_ACCESS_SECRET, env.JWT_REFRESH_SECRET].includes(env.FILE_SIGNING_SECRET)) {
    problems.push('FILE_SIGNING_SECRET: must differ from the JWT secrets')
  }
  return problems
}

/** Where files go: an S3-compatible bucket when `S3_BUCKET` is set, else the local disk under DATA_DIR. */
function storageSettings(env: Env, dataDir: string): Config['storage'] {
  return env.S3_BUCKET
    ? {
        kind: 's3',
        bucket: env.S3_BUCKET,
        region: env.S3_REGION,
        endpoint: env.S3_ENDPOINT,
        publicEndpoint: env.S3_PUBLIC_ENDPOINT,
        accessKeyId: env.S3_ACCESS_KEY_ID,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY,
        // Custom endpoints (MinIO, R2, ...) usually need path-style addressing.
        forcePathStyle: env.S3_FORCE_PATH_STYLE ? env.S3_FORCE_PATH_STYLE === 'true' : env.S3_ENDPOINT !== undefined,
      }
    : { kind: 'local', dir: join(dataDir, 'uploads') }
}

const days = (value: number) => Math.round(value * 24 * 3600 * 1000)

/** Money, orders and the business clock: fees, the windows of orders, tips, requests, clearance and notifications. */
function marketSettings(env: Env) {
  return {
    currency: env.CURRENCY,
    minPayoutCents: Math.round(env.MIN_PAYOUT * 100),
    ledgerPlatformSubAccounts: env.LEDGER_PLATFORM_SUB_ACCOUNTS,
    orders: { platformFeeBasisPoints: Math.round(env.PLATFORM_FEE_PERCENT * 100), autoCompleteAfterMs: days(env.ORDER_AUTO_COMPLETE_DAYS), requestExpiresAfterMs: days(env.ORDER_REQUEST_DAYS) },
    tips: { windowMs: days(env.TIP_DAYS), feeBasisPoints: Math.round(env.TIP_FEE_PERCENT * 100) },
    clearanceAfterMs: days(env.CLEARANCE_DAYS),
    workerTickMs: env.WORKER_TICK_SECONDS * 1000,
    notifications: { retentionMs: days(env.NOTIFICATION_RETENTION_DAYS) },
  }
}

/**
 * Parses the environment once. Every bad variable is reported together, by name, so a
 * misconfigured deployment is fixed in one pass instead of one restart per variable.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = source[key]
    if (value !== undefined && value !== '') raw[key] = value
    else if (DEFAULTS[key] !== undefined) raw[key] = DEFAULTS[key]
  }
  const problems: string[] = []
  for (const [key, schema] of Object.entries(EnvSchema.properties)) {
    // Whole numbers only: Convert would quietly turn "8080.5" into 8080.
    if ((schema as { type?: string }).type === 'integer' && typeof raw[key] === 'string' && !/^[0-9]+$/.test(raw[key])) {
      problems.push(`${key}: must be a whole number (got ${JSON.stringify(raw[key])})`)
      delete raw[key]
    }
  }
  const withDefaults = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw)) as Record<string, unknown>
  withDefaults.PUBLIC_URL ??= `http://localhost:${String(withDefaults.PORT)}`
  for (const error of Value.Errors(EnvSchema, withDefaults)) {
    const key = error.path.slice(1)
    problems.push(`${key || 'environment'}: ${error.message} (got ${JSON.stringify(raw[key] ?? null)})`)
  }
  const env = withDefaults as Env
  problems.push(...crossVariableProblems(env), ...superuserProblems(env), ...sellerLevelProblems(env))
  if (problems.length > 0) throw new ConfigError(problems)

  const isProduction = env.NODE_ENV === 'production'
  const dataDir = resolve(env.DATA_DIR)
  const secrets = resolveSecrets(env, isProduction, dataDir)
  const jwt = { accessSecret: secrets.accessSecret, refreshSecret: secrets.refreshSecret, previousAccessSecret: env.JWT_ACCESS_SECRET_PREVIOUS, previousRefreshSecret: env.JWT_REFRESH_SECRET_PREVIOUS }
  const publicUrl = env.PUBLIC_URL.replace(/\/+$/, '')
  const origins = env.CORS_ORIGINS.split(',').map((origin) => origin.trim()).filter(Boolean)

  return {
    env: env.NODE_ENV,
    isProduction,
    port: env.PORT,
    host: env.HOST,
    publicUrl,
    appUrl: (env.APP_URL ?? publicUrl).replace(/\/+$/, ''),
    dataDir,
    database: env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE } : { kind: 'pglite', dataDir: join(dataDir, 'db') },
    redisUrl: env.REDIS_URL,
    jwt,
    mail: { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM, dir: join(dataDir, 'mail') },
    storage: storageSettings(env, dataDir),
    tmpDir: join(dataDir, 'tmp'),
    signedUrlTtlSeconds: env.SIGNED_URL_TTL_SECONDS,
    fileSigning: { secret: secrets.fileSigningSecret, previousSecret: env.FILE_SIGNING_SECRET_PREVIOUS },
    corsOrigins: origins.includes('*') ? '*' : origins,
    responseEnvelope: env.RESPONSE_ENVELOPE,
    trustProxy: env.TRUST_PROXY === 'true',
    runWorker: env.RUN_WORKER === 'true',
    passwordHashConcurrency: env.PASSWORD_HASH_CONCURRENCY ?? defaultHashConcurrency(),
    rateLimit: {
      auth: env.RATE_LIMIT_AUTH,
      uploads: env.RATE_LIMIT_UPLOADS,
      general: env.RATE_LIMIT_GENERAL,
      windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
    },
    ...marketSettings(env),
    ...reviewSettings(env),
    payments: { provider: env.PAYMENTS_PROVIDER, sandboxEnabled: env.PAYMENTS_SANDBOX_ENABLED ? env.PAYMENTS_SANDBOX_ENABLED === 'true' : !isProduction },
    webhooks: {
      url: env.WEBHOOK_URL,
      secret: env.WEBHOOK_SECRET,
      allowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS ? env.WEBHOOK_ALLOW_PRIVATE_NETWORKS === 'true' : !isProduction,
    },
    realtime: { heartbeatMs: env.WS_HEARTBEAT_SECONDS * 1000, maxSocketsPerUser: env.WS_MAX_SOCKETS_PER_USER },
    logLevel: env.LOG_LEVEL,
    metricsToken: env.METRICS_TOKEN,
    superuser: { email: env.SUPERUSER_EMAIL, password: env.SUPERUSER_PASSWORD, fullName: env.SUPERUSER_FULL_NAME },
  }
}

/**
 * The first administrator's variables follow the API's rules for an account, or it could never
 * log in. They come as a pair; the password is never echoed.
 */
function superuserProblems(env: Env): string[] {
  const problems: string[] = []
  if (env.SUPERUSER_EMAIL !== undefined && !Value.Check(Email, env.SUPERUSER_EMAIL)) problems.push(`SUPERUSER_EMAIL: ${String(Email.errorMessage)} (got ${JSON.stringify(env.SUPERUSER_EMAIL)})`)
  if (env.SUPERUSER_PASSWORD !== undefined && !Value.Check(Password, env.SUPERUSER_PASSWORD)) problems.push(`SUPERUSER_PASSWORD: ${String(Password.errorMessage)}`)
  if (env.SUPERUSER_FULL_NAME !== undefined && !Value.Check(FullName, env.SUPERUSER_FULL_NAME)) problems.push(`SUPERUSER_FULL_NAME: ${String(FullName.errorMessage)}`)
  if (env.SUPERUSER_EMAIL !== undefined && env.SUPERUSER_PASSWORD === undefined) problems.push('SUPERUSER_PASSWORD: required with SUPERUSER_EMAIL')
  if (env.SUPERUSER_PASSWORD !== undefined && env.SUPERUSER_EMAIL === undefined) problems.push('SUPERUSER_EMAIL: required with SUPERUSER_PASSWORD')
  return problems
}

function hasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url)
    return parsed.username !== '' || parsed.password !== ''
  } catch {
    return false
  }
}

/** The secrets kept in `DATA_DIR/secrets.json` outside production, by their names there. */
interface Secrets {
  accessSecret: string
  refreshSecret: string
  fileSigningSecret: string
}

const SECRET_VARIABLES: Record<keyof Secrets, 'JWT_ACCESS_SECRET' | 'JWT_REFRESH_SECRET' | 'FILE_SIGNING_SECRET'> = {
  accessSecret: 'JWT_ACCESS_SECRET',
  refreshSecret: 'JWT_REFRESH_SECRET',
  fileSigningSecret: 'FILE_SIGNING_SECRET',
}

/**
 * Production must be given every secret. Elsewhere a secret the environment does not give is
 * generated on first start and kept in DATA_DIR, so tokens and signed links survive restarts
 * without any setup; one missing from an older file is added to it.
 */
function resolveSecrets(env: Env, isProduction: boolean, dataDir: string): Secrets {
  const names = Object.keys(SECRET_VARIABLES) as (keyof Secrets)[]
  if (names.every((name) => env[SECRET_VARIABLES[name]])) {
    return Object.fromEntries(names.map((name) => [name, env[SECRET_VARIABLES[name]]!])) as unknown as Secrets
  }
  // Production without every secret was refused above, with the other problems.
  if (isProduction) throw new ConfigError(['secrets: required when NODE_ENV=production'])
  const file = join(dataDir, 'secrets.json')
  let stored: Partial<Secrets> = {}
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<Secrets>
  } catch {
    stored = {}
  }
  const kept = Object.fromEntries(names.map((name) => [name, stored[name] ?? randomBytes(48).toString('base64url')])) as unknown as Secrets
  if (names.some((name) => kept[name] !== stored[name])) {
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, JSON.stringify(kept, null, 2), { mode: 0o600 })
  }
  return Object.fromEntries(names.map((name) => [name, env[SECRET_VARIABLES[name]] ?? kept[name]])) as unknown as Secrets
}
