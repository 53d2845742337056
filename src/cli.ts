import { parseArgs } from 'node:util'
import { Value } from '@sinclair/typebox/value'
import { loadConfig, type Config } from './config.ts'
import type { Database } from './db/client.ts'
import { openMigratedDatabase } from './db/open.ts'
import { systemClock } from './lib/clock.ts'
import { AppError } from './lib/errors.ts'
import { createLogger } from './platform/logging/logger.ts'
import { createMailer } from './platform/mail/mailer.ts'
import { createStorage } from './platform/storage/create-storage.ts'
import { createRealtimeHub } from './platform/realtime/create-hub.ts'
import { createInProcessHub } from './platform/realtime/in-process-hub.ts'
import type { RealtimeHub } from './platform/realtime/realtime.ts'
import { Email, FullName, Password, Username } from './modules/users/users.schemas.ts'
import { createContainer } from './container.ts'
import { activityOptionsOf, seedActivity } from './seed/activity.ts'
import { seedBulk } from './seed/bulk.ts'
import { DEMO_EMAIL_DOMAIN, DEMO_PASSWORD, seedDemo } from './seed/demo.ts'

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  migrate                    apply pending database migrations
  create-superuser           create an active superuser
      --email E --password P --full-name N [--username U]
      (or SUPERUSER_EMAIL / SUPERUSER_PASSWORD / SUPERUSER_FULL_NAME)
  seed                       fill the database with demo sellers and services (idempotent)
      [--services N]         instead, top up to N generated active services for benchmarks
      [--activity]           with --services, then generate about one order per service with its
                             buyer (one per four orders), money in the ledger, conversation and
                             messages (five per order), delivery, reviews and notifications;
                             refuses a database that has them already
  worker                     run the background worker alone (PostgreSQL only)
  ledger:check               check that the books balance; exits 1 when they do not
  levels:evaluate            evaluate every seller's level now and print each change
`

async function withDatabase<T>(config: Config, run: (database: Database) => Promise<T>): Promise<T> {
  const database = await openMigratedDatabase(config.database, createLogger({ level: config.logLevel }))
  try {
    return await run(database)
  } finally {
    await database.close()
  }
}

function containerFor(config: Config, database: Database, hub?: RealtimeHub) {
  const logger = createLogger({ level: config.logLevel })
  const mailer = createMailer(config.mail, logger)
  // Commands hold no sockets: without a hub given, frames have nowhere to go here.
  const realtime = hub ?? createInProcessHub(config.realtime)
  return { logger, mailer, container: createContainer({ config, db: database.db, clock: systemClock, mailer, storage: createStorage(config.storage), logger, realtime }) }
}

async function createSuperuser(config: Config, argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { email: { type: 'string' }, password: { type: 'string' }, 'full-name': { type: 'string' }, username: { type: 'string' } },
  })
  const email = values.email ?? config.superuser.email
  const password = values.password ?? config.superuser.password
  const fullName = values['full-name'] ?? config.superuser.fullName ?? 'Administrator'
  const missing = [!email && '--email', !password && '--password'].filter(Boolean)
  if (missing.length > 0) throw new Error(`create-superuser needs ${missing.join(' and ')}\n\n${USAGE}`)
  // The same rules as the API, or the account could never log in.
  if (!Value.Check(Email, email)) throw new Error('--email must be a valid e-mail address')
  if (!Value.Check(Password, password)) throw new Error('--password must be 8 to 128 characters with an uppercase letter, a lowercase letter and a digit')
  if (!Value.Check(FullName, fullName)) throw new Error('--full-name must be 2 to 100 characters')
  if (values.username !== undefined && !Value.Check(Username, values.username)) throw new Error('--username must be 3 to 20 characters of a-z, 0-9 and _')

  await withDatabase(config, async (database) => {
    const { container, mailer } = containerFor(config, database)
    try {
      const user = await container.admin.createSuperuser({ email, password, fullName, username: values.username })
      console.log(user.id)
    } finally {
      mailer.close()
    }
  })
}

async function seed(config: Config, argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { services: { type: 'string' }, activity: { type: 'boolean', default: false } } })
  const count = values.services === undefined ? undefined : Number(values.services)
  if (count !== undefined && (!Number.isSafeInteger(count) || count < 1 || count > 10_000_000)) throw new Error('--services must be a whole number from 1 to 10000000')
  if (values.activity && count === undefined) throw new Error('--activity needs --services N')

  await withDatabase(config, async (database) => {
    if (count !== undefined) {
      console.log(`seeding ${count} services...`)
      const result = await seedBulk(database.db, count, (line) => console.log(line))
      console.log(`${result.servicesCreated} services and ${result.sellersCreated} sellers added (${result.servicesTotal} bulk services) in ${(result.milliseconds / 1000).toFixed(1)} s`)
      if (values.activity) {
        console.log('seeding activity...')
        const activity = await seedActivity(database.db, activityOptionsOf(config), (line) => console.log(line))
        console.log(
          `${activity.orders} orders, ${activity.buyers} buyers, ${activity.messages} messages, ${activity.reviews} reviews and ${activity.ledgerTransactions} ledger transactions in ${(activity.milliseconds / 1000).toFixed(1)} s`,
        )
      }
      return
    }
    const { container, mailer } = containerFor(config, database)
    try {
      const result = await seedDemo({ db: container.db, clock: systemClock, container, tmpDir: config.tmpDir })
      console.log(`${result.usersCreated} users, ${result.avatarsCreated} avatars and ${result.servicesCreated} services added; demo sellers log in as seller01@${DEMO_EMAIL_DOMAIN} .. seller20@${DEMO_EMAIL_DOMAIN} with ${DEMO_PASSWORD}`)
    } finally {
      mailer.close()
    }
  })
}

/** Prints the reconciliation as JSON (`{ ok, transactions, accounts, problems }`); exit code 1 when it is not ok. */
async function checkLedger(config: Config): Promise<void> {
  await withDatabase(config, async (database) => {
    const { container, mailer } = containerFor(config, database)
    try {
      const result = await container.wallet.checkLedger()
      console.log(JSON.stringify(result, null, 2))
      if (!result.ok) process.exitCode = 1
    } finally {
      mailer.close()
    }
  })
}

/** Prints one line per change of level (`<userId> <from> -> <to>`), then how many sellers were evaluated and how many levels changed. */
async function evaluateLevels(config: Config): Promise<void> {
  await withDatabase(config, async (database) => {
    const { container, mailer } = containerFor(config, database)
    try {
      const { evaluated, changes } = await container.reviews.evaluateSellerLevels()
      for (const change of changes) console.log(`${change.userId} ${change.from} -> ${change.to}`)
      console.log(`sellers evaluated: ${evaluated}, levels changed: ${changes.length}`)
    } finally {
      mailer.close()
    }
  })
}

async function runWorker(config: Config): Promise<void> {
  if (config.database.kind === 'pglite') {
    throw new Error('The standalone worker needs PostgreSQL (DATABASE_URL): the embedded database belongs to the API process, whose worker runs in-process.')
  }
  const database = await openMigratedDatabase(config.database, createLogger({ level: config.logLevel }))
  // Jobs push frames too (a new notification): through Redis they reach the API instances' sockets.
  const realtime = createRealtimeHub({ redisUrl: config.redisUrl, ...config.realtime, logger: createLogger({ level: config.logLevel }) })
  await realtime.start()
  const { container, logger, mailer } = containerFor(config, database, realtime)
  container.worker.start()
  logger.info('worker started')
  const stop = async () => {
    logger.info('worker stopping')
    await container.worker.stop()
    await realtime.close()
    mailer.close()
    await database.close()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop())
  process.once('SIGINT', () => void stop())
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  switch (command) {
    case 'migrate': {
      const config = loadConfig()
      await withDatabase(config, async () => console.log('migrations applied'))
      return
    }
    case 'create-superuser':
      return createSuperuser(loadConfig(), rest)
    case 'seed':
      return seed(loadConfig(), rest)
    case 'ledger:check':
      return checkLedger(loadConfig())
    case 'levels:evaluate':
      return evaluateLevels(loadConfig())
    case 'worker':
      return runWorker(loadConfig())
    default:
      console.log(USAGE)
      if (command && command !== 'help' && command !== '--help') process.exitCode = 2
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof AppError) console.error(`error: ${error.details.map((detail) => `${detail.field} ${detail.message}`).join('; ') || error.message}`)
  else if (error instanceof Error) console.error(`error: ${error.message}`)
  else console.error(error)
  process.exit(1)
})
