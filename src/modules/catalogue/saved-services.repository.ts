import { sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { placeholdersOf } from '../../db/fragments.ts'
import { preparedSql } from '../../db/statements.ts'
import { categories } from './categories.table.ts'
import { savedServices } from './saved-services.table.ts'
import { listedJsonSql, type ListedJson, type ServiceViews } from './service-lists.repository.ts'
import { services } from './services.table.ts'

interface Saving {
  userId: string
  serviceId: string
}

const saving = placeholdersOf<Saving & { at: string }>()

/** Adds the service to the list once; the service's counter moves only when a row was added. */
const add = preparedSql<Saving & { at: string }, { added: number }>(
  'catalogue_saved_add',
  sql`with added as (
      insert into ${savedServices} (user_id, service_id, created_at) values (${saving('userId')}::uuid, ${saving('serviceId')}::uuid, ${saving('at')}::timestamptz)
      on conflict do nothing
      returning service_id),
    counted as (update ${services} set saved_count = saved_count + 1 where id in (select service_id from added) returning id)
    select (select count(*) from added)::int as added`,
)

/** Takes the service off the list; the service's counter moves only when a row was removed. */
const remove = preparedSql<Saving, { removed: number }>(
  'catalogue_saved_remove',
  sql`with removed as (
      delete from ${savedServices} where user_id = ${saving('userId')}::uuid and service_id = ${saving('serviceId')}::uuid
      returning service_id),
    counted as (update ${services} set saved_count = saved_count - 1 where id in (select service_id from removed) returning id)
    select (select count(*) from removed)::int as removed`,
)

interface SavedPageValues {
  userId: string
  offset: number
  limit: number
}

/**
 * A page of a person's saved services that are active and not deleted, newest saved first (the
 * owner's index), with their number: one statement.
 */
function prepareSavedPage(views: ServiceViews) {
  const p = placeholdersOf<SavedPageValues>()
  const mine = sql`from ${savedServices} v join ${services} s on s.id = v.service_id
      where v.user_id = ${p('userId')}::uuid and s.status = 'active' and s.deleted_at is null`
  return preparedSql<SavedPageValues, { total: number; items: ListedJson[] }>(
    'catalogue_saved_page',
    sql`with page as (
        select v.service_id as id, v.created_at as saved_at ${mine}
        order by v.created_at desc, v.service_id desc
        offset (select ${p('offset')}::int) limit ${p('limit')}::int)
      select (select count(*) ${mine})::int as total,
        coalesce((select json_agg(${listedJsonSql(views)} order by page.saved_at desc, page.id desc)
          from page join ${services} s on s.id = page.id join ${categories} c on c.id = s.category_id), '[]'::json) as items`,
  )
}

/** A person's saved services: adding, removing, and their page. */
export function createSavedServicesRepository(views: ServiceViews) {
  let page: ReturnType<typeof prepareSavedPage> | undefined
  const savedPage = () => (page ??= prepareSavedPage(views))
  return {
    savedPage,
    /** Whether a row was added (false: already saved). */
    add: async (executor: Executor, saved: Saving, at: Date) => ((await add(executor, { ...saved, at: at.toISOString() }))[0]?.added ?? 0) > 0,
    /** Whether a row was removed (false: not saved). */
    remove: async (executor: Executor, saved: Saving) => ((await remove(executor, saved))[0]?.removed ?? 0) > 0,
    page: async (executor: Executor, values: SavedPageValues) => (await savedPage()(executor, values))[0] ?? { total: 0, items: [] },
  }
}
