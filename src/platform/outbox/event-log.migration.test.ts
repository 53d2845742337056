import { afterAll, describe, expect, it } from 'vitest'
import { databaseBefore } from '../../../test/setup/migrations.ts'

/** Moving the log to `event_log` keeps what readers already paged through, and logs what was still queued. */
describe('migration event_log_append', () => {
  const database = databaseBefore('0021_order_timeline')
  const { client } = database
  afterAll(database.close)

  it('keeps the cursors of the old log, appends the events whose jobs had not run in the order they were written, and goes on from there', async () => {
    await database.before()
    const ids = Array.from({ length: 6 }, (_, n) => `0190a000-0000-7000-8000-00000000000${n}`)
    const payload = (event: string, at: string) => JSON.stringify({ event, timestamp: at, data: { serviceId: ids[0] } })
    // Three events recorded by the old event job (cursor 3 lost to a rolled-back append), their jobs done.
    await client.query(
      `insert into webhook_events (cursor, id, event, occurred_at, data, recorded_at) overriding system value values
        (1, $1, 'service.approved', '2026-01-01T10:00:00Z', '{}', '2026-01-01T10:00:01Z'),
        (2, $2, 'service.rejected', '2026-01-01T10:01:00Z', '{}', '2026-01-01T10:01:01Z'),
        (4, $3, 'payout.processed', '2026-01-01T10:02:00Z', '{}', '2026-01-01T10:02:01Z')`,
      ids.slice(0, 3),
    )
    await client.query(`insert into outbox_jobs (id, topic, payload, status, max_attempts, run_at, created_at) values ($1, 'event', $2, 'done', 12, '2026-01-01T10:00:00Z', '2026-01-01T10:00:00Z')`, [
      ids[0],
      payload('service.approved', '2026-01-01T10:00:00Z'),
    ])
    // Two events still queued when the new version starts, written in this order.
    await client.query(`insert into outbox_jobs (id, topic, payload, status, max_attempts, run_at, created_at) values ($1, 'event', $2, 'pending', 12, '2026-01-01T10:04:00Z', '2026-01-01T10:04:00Z')`, [
      ids[4],
      payload('order.completed', '2026-01-01T10:04:00Z'),
    ])
    await client.query(`insert into outbox_jobs (id, topic, payload, status, max_attempts, run_at, created_at) values ($1, 'event', $2, 'pending', 12, '2026-01-01T10:03:00Z', '2026-01-01T10:03:00Z')`, [
      ids[3],
      payload('order.created', '2026-01-01T10:03:00Z'),
    ])

    await database.after()

    const log = await client.query<{ cursor: number; id: string; event: string }>('select cursor::int, id, event from event_log order by cursor')
    expect(log.rows).toEqual([
      { cursor: 1, id: ids[0], event: 'service.approved' },
      { cursor: 2, id: ids[1], event: 'service.rejected' },
      { cursor: 4, id: ids[2], event: 'payout.processed' },
      { cursor: 5, id: ids[3], event: 'order.created' },
      { cursor: 6, id: ids[4], event: 'order.completed' },
    ])
    expect((await client.query("select to_regclass('webhook_events') as found")).rows).toEqual([{ found: null }])

    // The next event is appended when its transaction commits, after the others.
    await client.transaction(async (tx) => {
      await tx.query(`insert into outbox_jobs (id, topic, payload, status, max_attempts, run_at, created_at) values ($1, 'event', $2, 'pending', 12, now(), now())`, [
        ids[5],
        payload('service.approved', '2026-01-01T10:05:00Z'),
      ])
      expect((await tx.query('select id from event_log where id = $1', [ids[5]])).rows).toEqual([])
    })
    expect((await client.query('select cursor::int, occurred_at from event_log where id = $1', [ids[5]])).rows).toEqual([{ cursor: 7, occurred_at: new Date('2026-01-01T10:05:00Z') }])
  })
})
