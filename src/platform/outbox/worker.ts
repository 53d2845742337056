import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { MINUTE, SECOND } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { createOutboxRepository } from './outbox.repository.ts'
import type { OutboxJobRow } from './outbox.table.ts'

export type JobHandler = (payload: Record<string, unknown>, job: OutboxJobRow) => Promise<void>

/** Housekeeping that every worker runs on a schedule (idempotent: several instances may run it). */
export interface PeriodicTask {
  name: string
  everyMs: number
  run: () => Promise<unknown>
  /** Waits for work the task left running in the background (the worker's stop awaits it). */
  stop?: () => Promise<void>
}

export interface WorkerOptions {
  db: Db
  clock: Clock
  logger: FastifyBaseLogger
  handlers: Record<string, JobHandler>
  periodic?: PeriodicTask[]
  batchSize?: number
  pollIntervalMs?: number
  /** How long a claim holds before another worker may take the job over. */
  leaseMs?: number
  /** Told of every attempt's outcome (metrics). */
  onAttempt?: (topic: string, succeeded: boolean) => void
}

/** Exponential backoff: 30 s, 1 min, 2 min, ... capped at 6 h, with up to 20 % jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30 * SECOND * 2 ** (attempt - 1), 360 * MINUTE)
  return Math.round(base * (1 + 0.2 * random()))
}

export function createWorker(options: WorkerOptions) {
  const { db, clock, logger, handlers } = options
  const batchSize = options.batchSize ?? 20
  const pollIntervalMs = options.pollIntervalMs ?? 1000
  const leaseMs = options.leaseMs ?? 5 * MINUTE
  const outbox = createOutboxRepository(db)
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined
  let stopped = true
  const lastRun = new Map<string, number>()

  async function process(job: OutboxJobRow): Promise<boolean> {
    const startedAt = clock.now()
    const handler = handlers[job.topic]
    let error: string | undefined
    try {
      if (!handler) throw new Error(`no handler for topic ${job.topic}`)
      await handler(job.payload as Record<string, unknown>, job)
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught)
    }
    const finishedAt = clock.now()
    await outbox.recordAttempt({ id: newId(), jobId: job.id, attempt: job.attempts, startedAt, finishedAt, succeeded: !error, error: error ?? null })
    options.onAttempt?.(job.topic, !error)
    if (!error) {
      await outbox.finish(job.id, job.attempts, { status: 'done', completedAt: finishedAt, lockedUntil: null, lastError: null })
      return true
    }
    const exhausted = job.attempts >= job.maxAttempts
    logger[exhausted ? 'error' : 'warn']({ jobId: job.id, topic: job.topic, attempt: job.attempts, error }, exhausted ? 'job gave up' : 'job failed; will retry')
    await outbox.finish(job.id, job.attempts, {
      status: exhausted ? 'dead' : 'pending',
      runAt: exhausted ? job.runAt : new Date(finishedAt.getTime() + backoffDelay(job.attempts)),
      lockedUntil: null,
      lastError: error,
    })
    return false
  }

  /** Claims and runs one batch of due jobs; returns how many ran. */
  async function runOnce(): Promise<{ processed: number; failed: number }> {
    const now = clock.now()
    const jobs = await outbox.claimDue(now, new Date(now.getTime() + leaseMs), batchSize)
    let failed = 0
    for (const job of jobs) if (!(await process(job))) failed++
    return { processed: jobs.length, failed }
  }

  /** Runs batches until nothing is due: for the CLI, and for tests that want every job done. */
  async function drain(): Promise<number> {
    let total = 0
    for (;;) {
      const { processed } = await runOnce()
      total += processed
      if (processed < batchSize) return total
    }
  }

  /** Runs each periodic task whose interval has passed since its last run (the first call runs all). */
  async function runPeriodic(): Promise<string[]> {
    const ran: string[] = []
    for (const task of options.periodic ?? []) {
      const now = clock.now().getTime()
      const previous = lastRun.get(task.name)
      if (previous !== undefined && now - previous < task.everyMs) continue
      lastRun.set(task.name, now)
      try {
        await task.run()
        ran.push(task.name)
      } catch (error) {
        logger.error({ err: error, task: task.name }, 'periodic task failed')
      }
    }
    return ran
  }

  function schedule(): void {
    if (stopped) return
    timer = setTimeout(() => {
      running = Promise.all([drain(), runPeriodic()])
        .catch((error: unknown) => logger.error({ err: error }, 'worker loop failed'))
        .finally(() => {
          running = undefined
          schedule()
        })
    }, pollIntervalMs)
    timer.unref()
  }

  return {
    runOnce,
    drain,
    runPeriodic,
    start(): void {
      if (!stopped) return
      stopped = false
      schedule()
    },
    /** Stops polling and waits for the batch in flight, so no job is left half-recorded. */
    async stop(): Promise<void> {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
      for (const task of options.periodic ?? []) if (task.stop) await task.stop()
    },
  }
}

export type Worker = ReturnType<typeof createWorker>
