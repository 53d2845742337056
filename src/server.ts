import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { ConfigError, loadConfig, type Config } from './config.ts'
import { DatabaseStartError, openMigratedDatabase } from './db/open.ts'
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
