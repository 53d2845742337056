import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import { ConfigError, loadConfig, type Config } from './config.ts'
import { DatabaseStartError, openMigratedDatabase } from './db/open.ts'
import { AppError } from './lib/errors.ts'
import { createLogger } from './platform/logging/logger.ts'

/** A start-up failure already explained in one line: printed as it is, without a stack. */
class StartupError extends Error {}

function describeListenError(error: unknown, config: Config): string | undefined {
  const code = (error as { code?: string }).code
  if (code === 'EADDRINUSE') return `Port ${config.port} on ${config.host} is already in use. Stop the other process or set PORT.`
  if (code === 'EACCES') return `Not allowed to listen on port ${config.port}. Use a port above 1023 or set PORT.`
  if (code === 'EADDRNOTAVAIL') return `Cannot listen on ${config.host}: no such address on this machine. Check HOST.`
  return undefined
}

/**
 * The first administrator from SUPERUSER_EMAIL and SUPERUSER_PASSWORD (README "The first
 * administrator"): created before the port opens when no superuser exists; otherwise nothing is
 * created or changed, whatever the variables say.
 */
async function createFirstSuperuser(app: FastifyInstance, config: Config): Promise<void> {
  const { email, password, fullName } = config.superuser
  if (email === undefined || password === undefined) return
  const created = await app.container.admin.ensureFirstSuperuser({ email, password, fullName }).catch((error: unknown) => {
    // The e-mail belongs to an account that is no superuser: promoting it is a decision for a person.
    if (!(error instanceof AppError)) throw error
    const reason = error.details.map((detail) => `${detail.field} ${detail.message}`).join('; ') || error.message
    throw new StartupError(`SUPERUSER_EMAIL: ${reason}. Choose another address, or unset SUPERUSER_EMAIL.`)
  })
  if (created) app.log.info({ userId: created.id, email: created.email }, 'first superuser created from SUPERUSER_EMAIL')
  else app.log.info('a superuser exists: SUPERUSER_EMAIL and SUPERUSER_PASSWORD are not used')
}

async function main(): Promise<void> {
  const config = loadConfig()
  const logger = createLogger({ level: config.logLevel })
  const database = await openMigratedDatabase(config.database, logger)
  const app = await buildApp({ config, database, logger })

  // In-flight requests finish before the process exits; new connections are refused meanwhile.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
    await database.close()
  })

  try {
    await createFirstSuperuser(app, config)
  } catch (error) {
    await app.close()
    await database.close()
    throw error
  }

  try {
    await app.listen({ port: config.port, host: config.host })
  } catch (error) {
    await app.close()
    await database.close()
    throw new StartupError(describeListenError(error, config) ?? `Cannot listen on ${config.host}:${config.port}: ${String(error)}`)
  }
  app.log.info(`API at ${config.publicUrl}/api/v1, reference at ${config.publicUrl}/docs (${config.database.kind})`)
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StartupError || error instanceof DatabaseStartError) console.error(error.message)
  else console.error(error)
  process.exit(1)
})
