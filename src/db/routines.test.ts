import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openTestDatabase } from '../../test/setup/test-app.ts'
import { transferCall } from '../modules/wallet/ledger.repository.ts'
import type { Database } from './client.ts'

const SRC = join(import.meta.dirname, '..')

const sqlFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sqlFiles(path)
    return entry.name.endsWith('.sql') ? [path] : []
  })

/** The statements of a source file: comment lines dropped, split at the semicolons outside `$function$` bodies. */
function statementsOf(text: string): string[] {
  const statements: string[] = []
  let current = ''
  let inBody = false
  for (const line of text.split('\n')) {
    if (!inBody && line.startsWith('--')) continue
    current += `${line}\n`
    if ((line.split('$function$').length - 1) % 2 === 1) inBody = !inBody
    if (!inBody && line.trimEnd().endsWith(';')) {
      statements.push(current.trim().slice(0, -1))
      current = ''
    }
  }
  if (current.trim() !== '') throw new Error(`a statement without its closing semicolon: ${current.trim().slice(0, 80)}`)
  return statements
}

/** Line ends and trailing blanks aside, the text as PostgreSQL prints it. */
const normalise = (text: string) =>
  text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim()

/** Every function and trigger the sources declare, by name, as written (normalised), and where. */
function declared(): { functions: Map<string, string>; triggers: Map<string, string>; where: Map<string, string> } {
  const functions = new Map<string, string>()
  const triggers = new Map<string, string>()
  const where = new Map<string, string>()
  for (const file of sqlFiles(SRC)) {
    for (const statement of statementsOf(readFileSync(file, 'utf8'))) {
      const fn = /^CREATE OR REPLACE FUNCTION public\.(\w+)\(/.exec(statement)
      const trigger = /^CREATE (?:CONSTRAINT )?TRIGGER (\w+) /.exec(statement)
      const name = fn?.[1] ?? trigger?.[1]
      if (!name) throw new Error(`${relative(SRC, file)}: only functions and triggers, as PostgreSQL prints them, belong here: ${statement.slice(0, 80)}`)
      const key = `${fn ? 'function' : 'trigger'} ${name}`
      if (where.has(key)) throw new Error(`${key} is declared in ${where.get(key)} and ${relative(SRC, file)}`)
      where.set(key, relative(SRC, file))
      ;(fn ? functions : triggers).set(name, normalise(statement))
    }
  }
  return { functions, triggers, where }
}

/**
 * The functions and triggers migrations install have their source in the module they serve
 * (`src/modules/<name>/*.sql`, `src/platform/<name>/*.sql`), written as PostgreSQL prints them
 * (`pg_get_functiondef`, `pg_get_triggerdef`). The migrated database must hold exactly those:
 * a source changed without a migration that installs its text, or a routine installed without a
 * source, fails here.
 */
describe('database functions and triggers', () => {
  let database: Database
  let drop: () => Promise<void>
  beforeAll(async () => {
    ;({ database, drop } = await openTestDatabase())
  })
  afterAll(() => drop())

  const rows = async <Row>(query: ReturnType<typeof sql>): Promise<Row[]> => {
    const result: unknown = await database.db.execute(query)
    return (result as { rows: Row[] }).rows
  }

  it('installs every function exactly as its source file says, and no function without one', async () => {
    const installed = await rows<{ name: string; definition: string }>(sql`
      select p.proname as name, pg_get_functiondef(p.oid) as definition
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')`)
    const { functions } = declared()
    expect(new Map(installed.map((row) => [row.name, normalise(row.definition)]))).toEqual(functions)
  })

  it('installs every trigger exactly as its source file says, and no trigger without one', async () => {
    const installed = await rows<{ name: string; definition: string }>(sql`
      select t.tgname as name, pg_get_triggerdef(t.oid, true) as definition
      from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and not t.tgisinternal`)
    const { triggers } = declared()
    expect(new Map(installed.map((row) => [row.name, normalise(row.definition)]))).toEqual(triggers)
  })

  it('keeps each source in the module it serves', () => {
    const { where } = declared()
    expect(Object.fromEntries(where)).toEqual({
      'function ledger_transfer': 'modules/wallet/ledger-transfer.sql',
      'function ledger_platform_account': 'modules/wallet/ledger-transfer.sql',
      'function ledger_entries_append_only': 'modules/wallet/ledger-entries-append-only.sql',
      'trigger ledger_entries_append_only': 'modules/wallet/ledger-entries-append-only.sql',
      'trigger ledger_entries_no_truncate': 'modules/wallet/ledger-entries-append-only.sql',
      'function ledger_escrow_stat_counter': 'modules/wallet/escrow-stat-counter.sql',
      'trigger ledger_escrow_stat_counter': 'modules/wallet/escrow-stat-counter.sql',
      'function ledger_clearing_stat_counter': 'modules/wallet/clearing-stat-counter.sql',
      'trigger ledger_clearing_stat_counter': 'modules/wallet/clearing-stat-counter.sql',
      'function audit_log_append_only': 'modules/audit/audit-log-append-only.sql',
      'trigger audit_log_append_only': 'modules/audit/audit-log-append-only.sql',
      'trigger audit_log_no_truncate': 'modules/audit/audit-log-append-only.sql',
      'function stat_count': 'platform/statistics/stat-count.sql',
      'function users_stat_counters': 'modules/users/users-stat-counters.sql',
      'trigger users_stat_counters': 'modules/users/users-stat-counters.sql',
      'function services_stat_counters': 'modules/catalogue/services-stat-counters.sql',
      'trigger services_stat_counters': 'modules/catalogue/services-stat-counters.sql',
      'trigger services_stat_counters_update': 'modules/catalogue/services-stat-counters.sql',
      'function orders_stat_counters': 'modules/orders/orders-stat-counters.sql',
      'trigger orders_stat_counters': 'modules/orders/orders-stat-counters.sql',
      'trigger orders_stat_counters_update': 'modules/orders/orders-stat-counters.sql',
      'function seller_order_figures_add': 'modules/orders/seller-order-figures.sql',
      'function seller_order_figures_of_orders': 'modules/orders/seller-order-figures.sql',
      'function seller_order_figures_of_deliveries': 'modules/orders/seller-order-figures.sql',
      'trigger seller_order_figures': 'modules/orders/seller-order-figures.sql',
      'trigger seller_order_figures_update': 'modules/orders/seller-order-figures.sql',
      'trigger seller_order_figures_delivered': 'modules/orders/seller-order-figures.sql',
      'function catalogue_count_services': 'modules/catalogue/category-service-counts.sql',
      'trigger services_count_insert': 'modules/catalogue/category-service-counts.sql',
      'trigger services_count_update': 'modules/catalogue/category-service-counts.sql',
      'trigger services_count_delete': 'modules/catalogue/category-service-counts.sql',
      'function catalogue_collect_words': 'modules/catalogue/search-words.sql',
      'trigger services_words_insert': 'modules/catalogue/search-words.sql',
      'trigger services_words_update': 'modules/catalogue/search-words.sql',
      'function marketplace_join_words': 'modules/catalogue/join-words.sql',
      'function catalogue_search_correction': 'modules/catalogue/search-correction.sql',
      'function event_log_append': 'platform/outbox/event-log-append.sql',
      'trigger outbox_jobs_event_log': 'platform/outbox/event-log-append.sql',
      'function notifications_from_event': 'modules/notifications/notifications-from-events.sql',
      'trigger outbox_jobs_notifications': 'modules/notifications/notifications-from-events.sql',
    })
  })

  it('calls ledger_transfer with every input argument by name, each once', async () => {
    const [signature] = await rows<{ inputs: string[] }>(sql`
      select array_to_json(array(select arg.name from unnest(p.proargnames, p.proargmodes::text[]) as arg(name, mode) where arg.mode = 'i')) as inputs
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.proname = 'ledger_transfer'`)
    const inputs = signature!.inputs
    expect(inputs).toHaveLength(15)
    const text = new PgDialect().sqlToQuery(transferCall()).sql
    const args = text
      .slice(text.indexOf('(') + 1, text.lastIndexOf(')'))
      .split(',')
      .map((arg) => arg.trim())
    for (const arg of args) expect(arg, 'an argument passed by position').toMatch(/^[a-z_]+ => /)
    expect(args.map((arg) => arg.split(' => ')[0])).toEqual(inputs)
  })
})
