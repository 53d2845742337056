import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { ConfigError, loadConfig } from './config.ts'
import { openDatabase } from './db/client.ts'
import { runMigrations } from './db/migrate.ts'

async function main(): Promise<void> {
  const config = loadConfig()
  const database = openDatabase(config.database)
  await runMigrations(database)
  const app = await buildApp({ config, database })

  // In-flight requests finish before the process exits; new connections are refused meanwhile.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
    await database.close()
  })

  await app.listen({ port: config.port, host: config.host })
  app.log.info(`API at ${config.publicUrl}/api/v1, reference at ${config.publicUrl}/docs (${config.database.kind})`)
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message)
  else console.error(error)
  process.exit(1)
})
