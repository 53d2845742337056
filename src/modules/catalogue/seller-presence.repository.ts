import { sql } from 'drizzle-orm'
import type { Executor } from '../../db/client.ts'
import { placeholdersOf } from '../../db/fragments.ts'
import { preparedSql } from '../../db/statements.ts'
import { services } from './services.table.ts'

const p = placeholdersOf<{ users: string }>()

/** Of these users (comma-separated ids), those with an active service: one index probe each. */
const sellersAmong = preparedSql<{ users: string }, { id: string }>(
  'catalogue_sellers_among',
  sql`select u.id::text as id from unnest(string_to_array(${p('users')}::text, ',')::uuid[]) as u(id)
    where exists (select 1 from ${services} s where s.seller_id = u.id and s.status = 'active' and s.deleted_at is null)`,
)

export async function sellersAmongUsers(executor: Executor, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) return []
  return (await sellersAmong(executor, { users: userIds.join(',') })).map((row) => row.id)
}
