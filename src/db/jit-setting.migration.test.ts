import { afterAll, describe, expect, it } from 'vitest'
import { databaseBefore } from '../../test/setup/migrations.ts'

/** Connections to a migrated database run without JIT compilation (decision 0216). */
describe('migration catalogue_plans_without_jit', () => {
  const database = databaseBefore('0035_gross_volume_after_refunds')
  afterAll(database.close)

  it('sets jit = off on the database, for every new connection', async () => {
    await database.before()
    const settings = () =>
      database.client.query<{ setconfig: string[] }>(`select setconfig from pg_db_role_setting s join pg_database d on d.oid = s.setdatabase where d.datname = current_database() and s.setrole = 0`)
    expect((await settings()).rows).toEqual([])
    await database.after()
    expect((await settings()).rows).toEqual([{ setconfig: ['jit=off'] }])
  })
})
