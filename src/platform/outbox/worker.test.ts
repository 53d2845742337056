import { count, eq, sql } from 'drizzle-orm'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { createUser, unique } from '../../../test/factories/users.ts'
import { createTestApp, request, type TestContext } from '../../../test/setup/test-app.ts'
import type { Db } from '../../db/client.ts'
import { MINUTE, SECOND } from '../../lib/clock.ts'
import { users } from '../../modules/users/users.table.ts'
import { DEFAULT_MAX_ATTEMPTS, type JobRequest } from './outbox.ts'
import { outboxAttempts, outboxJobs } from './outbox.table.ts'
import { backoffDelay, createWorker, type JobHandler } from './worker.ts'

const jobById = async (db: Db, id: string) => {
  const [row] = await db.select().from(outboxJobs).where(eq(outboxJobs.id, id))
  if (!row) throw new Error(`no outbox job ${id}`)
  return row
}

const attemptsOf = (db: Db, id: string) => db.select().from(outboxAttempts).where(eq(outboxAttempts.jobId, id)).orderBy(outboxAttempts.attempt)

const jobsForUser = (db: Db, userId: string) => db.select().from(outboxJobs).where(sql`${outboxJobs.payload}->>'userId' = ${userId}`)

/**
 * Closes a test app. On PostgreSQL the harness drops the database while pool clients may still be
 * ending; the pool re-emits their "terminated by administrator" errors, which must not count here.
 */
async function closeApp(ctx: TestContext): Promise<void> {
  if (ctx.database.kind === 'postgres') ctx.database.pool.on('error', () => {})
  await ctx.close()
}

const countJobs = async (db: Db) => (await db.select({ n: count() }).from(outboxJobs))[0]!.n

/** The id of the transaction that wrote a row: equal for rows written by one transaction. */
async function writerOf(db: Db, table: 'users' | 'outbox_jobs', id: string): Promise<string> {
  const result: unknown = await db.execute(sql`select xmin::text as xmin from ${sql.identifier(table)} where id = ${id}`)
  return (result as { rows: { xmin: string }[] }).rows[0]!.xmin
}

describe('outbox worker', () => {
  let ctx: TestContext
  let db: Db
  beforeAll(async () => {
    ctx = await createTestApp()
    db = ctx.database.db
  })
  afterAll(() => closeApp(ctx))
  afterEach(() => {
    ctx.mailer.failing = false
  })

  const enqueue = (job: JobRequest) => db.transaction((tx) => ctx.app.container.outbox.enqueue(tx, job))
  const drain = () => ctx.app.container.worker.drain()

  const register = (email: string, name = 'Outbox Tester') =>
    request(ctx.app, { method: 'POST', url: '/auth/register', payload: { email, password: 'Secret123', name } })

  it('stores exactly one activation job in the transaction that creates the account', async () => {
    const email = `${unique('reg')}@example.test`
    // With a chosen username the account is inserted directly in the request's transaction (a
    // generated one goes through a savepoint, whose rows carry the savepoint's transaction id).
    const response = await request(ctx.app, {
      method: 'POST',
      url: '/auth/register',
      payload: { email, password: 'Secret123', name: 'Job Writer', username: unique('jw').slice(0, 20) },
    })
    expect(response.statusCode).toBe(201)
    const userId = response.json().data.id as string

    const jobs = await jobsForUser(db, userId)
    expect(jobs).toHaveLength(1)
    const [job] = jobs
    expect(job).toMatchObject({
      topic: 'mail.activation',
      payload: { userId },
      status: 'pending',
      attempts: 0,
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      lockedUntil: null,
      lastError: null,
      completedAt: null,
    })
    expect(job!.runAt).toEqual(ctx.clock.now())
    expect(job!.createdAt).toEqual(ctx.clock.now())
    expect(await writerOf(db, 'outbox_jobs', job!.id)).toBe(await writerOf(db, 'users', userId))
    // Nothing is sent before the worker runs.
    expect(ctx.mailer.sent.filter((message) => message.to === email)).toHaveLength(0)

    expect(await drain()).toBe(1)
  })

  it('stores no job when the registration is refused', async () => {
    const before = await countJobs(db)
    const invalid = await request(ctx.app, { method: 'POST', url: '/auth/register', payload: { email: 'not-an-email', password: 'x', name: '' } })
    expect(invalid.statusCode).toBe(400)
    expect(invalid.json().error.code).toBe('VALIDATION_ERROR')

    const { user } = await createUser(ctx)
    const duplicate = await register(user.email)
    expect(duplicate.statusCode).toBe(400)
    expect(duplicate.json().error.details).toEqual([{ field: 'email', message: 'is already registered' }])

    expect(await countJobs(db)).toBe(before)
    expect(await drain()).toBe(0)
  })

  it('creates no account when its activation job cannot be stored', async () => {
    await db.execute(
      sql.raw(`create function refuse_activation_jobs() returns trigger language plpgsql as $$
        begin
          if new.topic = 'mail.activation' then raise exception 'outbox is unavailable'; end if;
          return new;
        end $$`),
    )
    await db.execute(sql.raw('create trigger refuse_activation_jobs before insert on outbox_jobs for each row execute function refuse_activation_jobs()'))
    const email = `${unique('atomic')}@example.test`
    try {
      const response = await register(email)
      expect(response.statusCode).toBe(500)
      expect(response.json().error.code).toBe('INTERNAL_ERROR')
    } finally {
      await db.execute(sql.raw('drop trigger refuse_activation_jobs on outbox_jobs'))
      await db.execute(sql.raw('drop function refuse_activation_jobs()'))
    }
    expect(await db.select().from(users).where(eq(users.email, email))).toHaveLength(0)
    // Once the outbox accepts jobs again the same e-mail registers normally.
    expect((await register(email)).statusCode).toBe(201)
    expect(await drain()).toBe(1)
  })

  it('stores nothing when the enqueueing transaction rolls back', async () => {
    const topic = `test.${unique('rollback')}`
    await expect(
      db.transaction(async (tx) => {
        await ctx.app.container.outbox.enqueue(tx, { topic, payload: {} })
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    expect(await db.select().from(outboxJobs).where(eq(outboxJobs.topic, topic))).toHaveLength(0)
  })

  it('delivers the activation mail on drain and marks the job done with one successful attempt', async () => {
    const email = `${unique('deliver')}@example.test`
    const userId = (await register(email)).json().data.id as string
    const [pending] = await jobsForUser(db, userId)

    expect(await drain()).toBe(1)

    const sent = ctx.mailer.sent.filter((message) => message.to === email)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.subject).toBe('Activate your account')
    expect(ctx.mailer.linkTo(email)).toMatch(/^http:\/\/app\.test\/activate\?token=/)

    const job = await jobById(db, pending!.id)
    expect(job).toMatchObject({ status: 'done', attempts: 1, lockedUntil: null, lastError: null })
    expect(job.completedAt).toEqual(ctx.clock.now())
    const attempts = await attemptsOf(db, job.id)
    expect(attempts).toHaveLength(1)
    expect(attempts[0]).toMatchObject({ attempt: 1, succeeded: true, error: null, startedAt: ctx.clock.now(), finishedAt: ctx.clock.now() })

    // A done job is never run again.
    ctx.clock.advance(MINUTE)
    expect(await drain()).toBe(0)
    expect(ctx.mailer.sent.filter((message) => message.to === email)).toHaveLength(1)
  })

  it('keeps a job whose mail failed, backs it off and delivers it once the mail server is back', async () => {
    const email = `${unique('retry')}@example.test`
    const userId = (await register(email)).json().data.id as string
    const [pending] = await jobsForUser(db, userId)
    const failedAt = ctx.clock.now()

    ctx.mailer.failing = true
    expect(await drain()).toBe(1)

    const failed = await jobById(db, pending!.id)
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, lastError: 'SMTP unavailable', lockedUntil: null, completedAt: null })
    const delay = failed.runAt.getTime() - failedAt.getTime()
    expect(delay).toBeGreaterThanOrEqual(30 * SECOND)
    expect(delay).toBeLessThanOrEqual(36 * SECOND)
    const firstAttempts = await attemptsOf(db, failed.id)
    expect(firstAttempts).toHaveLength(1)
    expect(firstAttempts[0]).toMatchObject({ attempt: 1, succeeded: false, error: 'SMTP unavailable' })

    // Not before run_at, even once the mail server is back.
    ctx.mailer.failing = false
    expect(await drain()).toBe(0)
    ctx.clock.set(new Date(failed.runAt.getTime() - 1))
    expect(await drain()).toBe(0)
    expect(ctx.mailer.sent.filter((message) => message.to === email)).toHaveLength(0)

    ctx.clock.set(failed.runAt)
    expect(await drain()).toBe(1)
    expect(ctx.mailer.sent.filter((message) => message.to === email)).toHaveLength(1)
    const delivered = await jobById(db, failed.id)
    expect(delivered).toMatchObject({ status: 'done', attempts: 2, lastError: null, lockedUntil: null })
    expect(delivered.completedAt).toEqual(ctx.clock.now())
    const attempts = await attemptsOf(db, failed.id)
    expect(attempts.map((attempt) => [attempt.attempt, attempt.succeeded])).toEqual([
      [1, false],
      [2, true],
    ])
  })

  it('marks a job dead after max_attempts failures and never runs it again', async () => {
    const { user } = await createUser(ctx)
    const id = await enqueue({ topic: 'mail.password_reset', payload: { userId: user.id }, maxAttempts: 3 })
    ctx.mailer.failing = true

    for (const attempt of [1, 2]) {
      expect(await drain()).toBe(1)
      const job = await jobById(db, id)
      expect(job).toMatchObject({ status: 'pending', attempts: attempt, lastError: 'SMTP unavailable' })
      ctx.clock.set(job.runAt)
    }
    const beforeLast = await jobById(db, id)
    expect(await drain()).toBe(1)

    const dead = await jobById(db, id)
    expect(dead).toMatchObject({ status: 'dead', attempts: 3, maxAttempts: 3, lastError: 'SMTP unavailable', lockedUntil: null, completedAt: null })
    expect(dead.runAt).toEqual(beforeLast.runAt)
    expect((await attemptsOf(db, id)).map((attempt) => [attempt.attempt, attempt.succeeded])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ])

    ctx.mailer.failing = false
    ctx.clock.advance(7 * 24 * 60 * MINUTE)
    expect(await drain()).toBe(0)
    expect(ctx.mailer.sent.filter((message) => message.to === user.email)).toHaveLength(0)
    expect((await jobById(db, id)).status).toBe('dead')
  })

  it('claims a running job again once its lease has expired, and not before', async () => {
    const { user } = await createUser(ctx)
    const id = await enqueue({ topic: 'mail.password_reset', payload: { userId: user.id } })
    // A worker claimed the job and died: the row is left running with a lease.
    await db
      .update(outboxJobs)
      .set({ status: 'running', attempts: 1, lockedUntil: new Date(ctx.clock.now().getTime() + MINUTE) })
      .where(eq(outboxJobs.id, id))

    expect(await drain()).toBe(0)
    expect((await jobById(db, id)).status).toBe('running')

    ctx.clock.advance(MINUTE + 1)
    expect(await drain()).toBe(1)
    const job = await jobById(db, id)
    expect(job).toMatchObject({ status: 'done', attempts: 2, lockedUntil: null })
    expect(ctx.mailer.linkTo(user.email)).toMatch(/^http:\/\/app\.test\/reset-password\?token=/)
    expect((await attemptsOf(db, id)).map((attempt) => [attempt.attempt, attempt.succeeded])).toEqual([[2, true]])
  })

  it('claims a running job whose lease is already in the past', async () => {
    const { user } = await createUser(ctx)
    const id = await enqueue({ topic: 'mail.password_reset', payload: { userId: user.id } })
    await db
      .update(outboxJobs)
      .set({ status: 'running', attempts: 1, lockedUntil: new Date(ctx.clock.now().getTime() - SECOND) })
      .where(eq(outboxJobs.id, id))

    expect(await drain()).toBe(1)
    expect(await jobById(db, id)).toMatchObject({ status: 'done', attempts: 2 })
    expect(ctx.mailer.sent.filter((message) => message.to === user.email)).toHaveLength(1)
  })

  it('lets a worker whose lease expired record its attempt but not overwrite the newer claim', async () => {
    const topic = `test.${unique('lease')}`
    let started!: () => void
    const claimed = new Promise<void>((resolve) => (started = resolve))
    let fail!: (error: Error) => void
    const blocked = new Promise<void>((_resolve, reject) => (fail = reject))
    const slowHandler: JobHandler = async () => {
      started()
      await blocked
    }
    const options = { db, clock: ctx.clock, logger: ctx.app.log, leaseMs: MINUTE }
    const slow = createWorker({ ...options, handlers: { [topic]: slowHandler } })
    const fast = createWorker({ ...options, handlers: { [topic]: async () => {} } })
    const id = await enqueue({ topic, payload: {} })

    const slowRun = slow.runOnce()
    await claimed
    expect(await jobById(db, id)).toMatchObject({ status: 'running', attempts: 1 })

    ctx.clock.advance(MINUTE + 1)
    expect(await fast.runOnce()).toEqual({ processed: 1, failed: 0 })
    fail(new Error('took too long'))
    expect(await slowRun).toEqual({ processed: 1, failed: 1 })

    const job = await jobById(db, id)
    expect(job).toMatchObject({ status: 'done', attempts: 2, lastError: null })
    expect((await attemptsOf(db, id)).map((attempt) => [attempt.attempt, attempt.succeeded, attempt.error])).toEqual([
      [1, false, 'took too long'],
      [2, true, null],
    ])
  })

  it('retries a job with an unknown topic instead of losing it, until it is dead', async () => {
    const id = await enqueue({ topic: 'mail.no_such_topic', payload: { userId: 'x' }, maxAttempts: 2 })

    expect(await drain()).toBe(1)
    const failed = await jobById(db, id)
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, lastError: 'no handler for topic mail.no_such_topic' })
    expect(failed.runAt.getTime()).toBeGreaterThan(ctx.clock.now().getTime())
    expect(await attemptsOf(db, id)).toMatchObject([{ attempt: 1, succeeded: false, error: 'no handler for topic mail.no_such_topic' }])

    ctx.clock.set(failed.runAt)
    expect(await drain()).toBe(1)
    expect(await jobById(db, id)).toMatchObject({ status: 'dead', attempts: 2, topic: 'mail.no_such_topic', payload: { userId: 'x' } })
  })

  it('runs a job scheduled for later only once the clock reaches run_at', async () => {
    const { user } = await createUser(ctx)
    const runAt = new Date(ctx.clock.now().getTime() + 10 * MINUTE)
    const id = await enqueue({ topic: 'mail.password_reset', payload: { userId: user.id }, runAt })
    expect((await jobById(db, id)).runAt).toEqual(runAt)

    expect(await drain()).toBe(0)
    ctx.clock.set(runAt)
    expect(await drain()).toBe(1)
    expect((await jobById(db, id)).status).toBe('done')
  })

  it('claims at most batchSize jobs per run, oldest run_at first, and drain runs batches until none is due', async () => {
    const topic = `test.${unique('batch')}`
    const seen: number[] = []
    const worker = createWorker({
      db,
      clock: ctx.clock,
      logger: ctx.app.log,
      batchSize: 2,
      handlers: { [topic]: async (payload) => void seen.push(payload.n as number) },
    })
    const now = ctx.clock.now().getTime()
    await db.transaction(async (tx) => {
      for (const n of [4, 2, 5, 1, 3]) await ctx.app.container.outbox.enqueue(tx, { topic, payload: { n }, runAt: new Date(now - (10 - n) * SECOND) })
    })

    expect(await worker.runOnce()).toEqual({ processed: 2, failed: 0 })
    expect([...seen].sort((x, y) => x - y)).toEqual([1, 2])
    expect(await worker.drain()).toBe(3)
    expect([...seen].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5])
    expect(await worker.drain()).toBe(0)
  })

  it('stops a job at its time limit, records why and retries it later; the handler is not run again before then', async () => {
    await drain()
    const topic = `test.${unique('timeout')}`
    let calls = 0
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    let deadline: AbortController | undefined
    const asked: number[] = []
    const worker = createWorker({
      db,
      clock: ctx.clock,
      logger: ctx.app.log,
      leaseMs: MINUTE,
      batchSize: 3,
      timeoutSignal: (ms) => {
        asked.push(ms)
        deadline = new AbortController()
        return deadline.signal
      },
      // Never settles: a handler that ignores the signal is not waited for either.
      handlers: { [topic]: () => new Promise<void>(() => void (calls++, started())) },
    })
    const id = await enqueue({ topic, payload: {} })

    const run = worker.runOnce()
    await running
    deadline!.abort()
    expect(await run).toEqual({ processed: 1, failed: 1 })
    expect(asked).toEqual([20 * SECOND])
    const failed = await jobById(db, id)
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, lockedUntil: null, lastError: 'timed out after 20 s' })
    expect(failed.runAt.getTime()).toBeGreaterThan(ctx.clock.now().getTime())
    expect(await worker.runOnce()).toEqual({ processed: 0, failed: 0 })
    expect(calls).toBe(1)
    // Out of the way of the next tests' workers, which know no handler for it.
    await db.update(outboxJobs).set({ status: 'done' }).where(eq(outboxJobs.id, id))
  })

  it('hands back, unstarted, a job its claim no longer covers, so it runs once though another worker takes it over', async () => {
    await drain()
    const topic = `test.${unique('share')}`
    const runs: string[] = []
    const options = { db, clock: ctx.clock, logger: ctx.app.log, leaseMs: MINUTE, batchSize: 2, jobTimeoutMs: 20 * SECOND }
    const other = createWorker({ ...options, handlers: { [topic]: async (_payload, job) => void runs.push(job.id) } })
    let first = true
    const worker = createWorker({
      ...options,
      handlers: {
        [topic]: async (_payload, job) => {
          runs.push(job.id)
          if (first) {
            // The first job of the batch took 45 s of the 60 s claim.
            first = false
            ctx.clock.advance(45 * SECOND)
            return
          }
          // Started with 15 s of claim left for a 20 s job: the claim ends while it runs, and
          // another worker takes the job over.
          ctx.clock.advance(20 * SECOND)
          await other.runOnce()
        },
      },
    })
    const now = ctx.clock.now().getTime()
    const ids = await db.transaction(async (tx) =>
      Promise.all([1, 2].map((n) => ctx.app.container.outbox.enqueue(tx, { topic, payload: {}, runAt: new Date(now - (10 - n) * SECOND) }))),
    )

    expect(await worker.runOnce()).toEqual({ processed: 1, failed: 0 })
    expect(await jobById(db, ids[1]!)).toMatchObject({ status: 'pending', attempts: 0, lockedUntil: null })
    expect(await other.runOnce()).toEqual({ processed: 1, failed: 0 })
    expect(runs).toEqual(ids)
    for (const id of ids) expect(await jobById(db, id)).toMatchObject({ status: 'done', attempts: 1 })
  })

  it('refuses a batch whose jobs could outlive its lease', () => {
    expect(() => createWorker({ db, clock: ctx.clock, logger: ctx.app.log, handlers: {}, leaseMs: MINUTE, batchSize: 20, jobTimeoutMs: 10 * SECOND })).toThrow(RangeError)
  })
})

describe('backoffDelay', () => {
  const none = () => 0

  it('starts at 30 seconds and doubles with every attempt', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, none))).toEqual([30_000, 60_000, 120_000, 240_000, 480_000])
    expect(backoffDelay(10, none)).toBe(30_000 * 2 ** 9)
  })

  it('is capped at six hours', () => {
    const cap = 6 * 60 * MINUTE
    expect(backoffDelay(11, none)).toBe(cap)
    expect(backoffDelay(12, none)).toBe(cap)
    expect(backoffDelay(5000, none)).toBe(cap)
  })

  it('adds up to 20 % jitter', () => {
    expect(backoffDelay(1, () => 1)).toBe(36_000)
    expect(backoffDelay(2, () => 0.5)).toBe(66_000)
    expect(backoffDelay(20, () => 1)).toBe(6 * 60 * MINUTE * 1.2)
    for (let run = 0; run < 100; run++) {
      const delay = backoffDelay(3)
      expect(delay).toBeGreaterThanOrEqual(120_000)
      expect(delay).toBeLessThanOrEqual(144_000)
    }
  })
})

// The harness provides a template database only when the suite runs on PostgreSQL (TEST_DATABASE_URL).
describe.runIf(inject('pgTemplate') !== '')('outbox workers side by side on PostgreSQL', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => closeApp(ctx))

  it('processes each job exactly once when two workers drain concurrently', async () => {
    const db = ctx.database.db
    const topic = 'test.concurrent'
    const calls = new Map<string, number>()
    const handler: JobHandler = async (_payload, job) => {
      calls.set(job.id, (calls.get(job.id) ?? 0) + 1)
      // Yield so the other worker's claims interleave with this one's work.
      await new Promise((resolve) => setImmediate(resolve))
    }
    const ids = await db.transaction(async (tx) => {
      const created: string[] = []
      for (let n = 0; n < 30; n++) created.push(await ctx.app.container.outbox.enqueue(tx, { topic, payload: { n } }))
      return created
    })
    const options = { db, clock: ctx.clock, logger: ctx.app.log, handlers: { [topic]: handler }, batchSize: 3 }
    const first = createWorker(options)
    const second = createWorker(options)

    const [a, b] = await Promise.all([first.drain(), second.drain()])

    expect(a + b).toBe(30)
    expect([...calls.keys()].sort()).toEqual([...ids].sort())
    expect([...calls.values()].every((n) => n === 1)).toBe(true)
    const rows = await db.select().from(outboxJobs).where(eq(outboxJobs.topic, topic))
    expect(rows).toHaveLength(30)
    expect(rows.every((row) => row.status === 'done' && row.attempts === 1)).toBe(true)
    const attempts = await db.select().from(outboxAttempts)
    expect(attempts.filter((attempt) => ids.includes(attempt.jobId))).toHaveLength(30)
  })

  it('keeps draining after PostgreSQL terminates its idle connections (a restart or failover)', async () => {
    if (ctx.database.kind !== 'postgres') throw new Error('expected a PostgreSQL database')
    const { pool, db } = ctx.database
    const { user } = await createUser(ctx)
    // Two connections in the pool, idle, as between two polls of a long-running worker.
    const [first, second] = [await pool.connect(), await pool.connect()]
    first.release()
    second.release()
    expect(pool.idleCount).toBeGreaterThanOrEqual(2)

    const own = await pool.connect()
    try {
      const survivors = pool.totalCount - pool.idleCount
      const idleGone = new Promise<void>((resolve) => {
        const onRemove = () => {
          if (pool.totalCount > survivors) return
          pool.off('remove', onRemove)
          resolve()
        }
        pool.on('remove', onRemove)
      })
      await own.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')
      await idleGone
    } finally {
      own.release()
    }

    const id = await db.transaction((tx) => ctx.app.container.outbox.enqueue(tx, { topic: 'mail.password_reset', payload: { userId: user.id } }))
    expect(await ctx.app.container.worker.drain()).toBe(1)
    expect(await jobById(db, id)).toMatchObject({ status: 'done', attempts: 1 })
    expect(ctx.mailer.sent.filter((message) => message.to === user.email)).toHaveLength(1)
  })
})
