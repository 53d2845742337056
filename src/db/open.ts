import type { DatabaseConfig } from '../config.ts'
import { DatabaseInUseError, openDatabase, type Database, type DatabaseLog } from './client.ts'
import { runMigrations } from './migrate.ts'

/** The database could not be opened; the message is one line naming the variable to check. */
export class DatabaseStartError extends Error {
  override name = 'DatabaseStartError'
}

/** Opens and migrates the configured database, or throws a DatabaseStartError that says why not. */
export async function openMigratedDatabase(config: DatabaseConfig, log?: DatabaseLog): Promise<Database> {
  let database: Database | undefined
  try {
    database = await openDatabase(config, log)
    await runMigrations(database)
    return database
  } catch (error) {
    await database?.close().catch(() => undefined)
    throw new DatabaseStartError(describeDatabaseError(error, config))
  }
}

/** Where a PostgreSQL URL points, without its password. */
function target(url: string): { where: string; database: string; user: string } {
  try {
    const parsed = new URL(url)
    return { where: `${parsed.hostname}:${parsed.port || '5432'}`, database: decodeURIComponent(parsed.pathname.slice(1)) || '(default)', user: decodeURIComponent(parsed.username) || '(default)' }
  } catch {
    return { where: 'the configured host', database: '(unknown)', user: '(unknown)' }
  }
}

const codeOf = (error: unknown): string | undefined => {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: unknown }
  if (typeof code === 'string') return code
  return cause ? codeOf(cause) : undefined
}

/**
 * One line that says what failed when the database cannot be opened at start, and which variable
 * to check, instead of a driver's stack trace or error object.
 */
export function describeDatabaseError(error: unknown, config: DatabaseConfig): string {
  if (error instanceof DatabaseInUseError) return error.message
  const message = error instanceof Error ? error.message : String(error)
  if (config.kind === 'pglite') return `Cannot open the embedded database in ${config.dataDir}: ${message}. Check DATA_DIR.`
  const { where, database, user } = target(config.url)
  switch (codeOf(error)) {
    case 'ECONNREFUSED':
      return `Cannot connect to PostgreSQL at ${where}: connection refused (is it running?). Check DATABASE_URL.`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Cannot connect to PostgreSQL: the host of ${where} is unknown. Check DATABASE_URL.`
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return `Cannot connect to PostgreSQL at ${where}: no answer. Check DATABASE_URL and the network.`
    case '3D000':
      return `The database "${database}" does not exist on ${where}. Create it (createdb ${database}) or check DATABASE_URL.`
    case '28P01':
    case '28000':
      return `PostgreSQL at ${where} refused the credentials of user "${user}". Check DATABASE_URL.`
    default:
      return `Cannot open the PostgreSQL database at ${where}: ${message}. Check DATABASE_URL.`
  }
}
