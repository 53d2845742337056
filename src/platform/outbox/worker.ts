import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { MINUTE, SECOND } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { runWithJobSignal } from './job-context.ts'
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
  /**
   * How long one job may run before it is stopped and retried later: at most the lease divided by
   * the batch size (the default), so that the jobs of a batch, run one after another, all end
   * while their claim holds.
   */
  jobTimeoutMs?: number
  /** The signal that ends a job after `ms` (real time; tests pass one they abort themselves). */
  timeoutSignal?: (ms: number) => AbortSignal
  /** Told of every attempt's outcome (metrics). */
  onAttempt?: (topic: string, succeeded: boolean) => void
}

/** Exponential backoff: 30 s, 1 min, 2 min, ... capped at 6 h, with up to 20 % jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30 * SECOND * 2 ** (attempt - 1), 360 * MINUTE)
  return Math.round(base * (1 + 0.2 * random()))
}

/** What running one job needs from its worker. */
interface JobRun {
  outbox: Pick<ReturnType<typeof createOutboxRepository>, 'recordAttempt' | 'finish'>
  clock: Clock
  logger: FastifyBaseLogger
  handlers: Record<string, JobHandler>
  jobTimeoutMs: number
  timeoutSignal: (ms: number) => AbortSignal
  onAttempt?: (topic: string, succeeded: boolean) => void
}

/** Runs one claimed job within its time and records the attempt: done, retried later, or dead. Answers whether it succeeded. */
async function processJob(job: OutboxJobRow, run: JobRun): Promise<boolean> {
  const { outbox, clock, logger, jobTimeoutMs } = run
  const startedAt = clock.now()
  const handler = run.handlers[job.topic]
  let error: string | undefined
  try {
    if (!handler) throw new Error(`no handler for topic ${job.topic}`)
    const signal = run.timeoutSignal(jobTimeoutMs)
    // A handler that ignores the signal is not waited for past its time either.
    const timedOut = new Promise<never>((_resolve, reject) =>
      signal.addEventListener('abort', () => reject(new Error(`timed out after ${jobTimeoutMs / 1000} s`)), { once: true }),
    )
    await Promise.race([runWithJobSignal(signal, () => handler(job.payload as Record<string, unknown>, job)), timedOut])
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught)
  }
  const finishedAt = clock.now()
  await outbox.recordAttempt({ id: newId(), jobId: job.id, attempt: job.attempts, startedAt, finishedAt, succeeded: !error, error: error ?? null })
  run.onAttempt?.(job.topic, !error)
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

/** Runs each periodic task whose interval has passed since its last run (`lastRun`, by name; the first call runs all). */
async function runDueTasks(tasks: PeriodicTask[], lastRun: Map<string, number>, clock: Clock, logger: FastifyBaseLogger): Promise<string[]> {
  const ran: string[] = []
  for (const task of tasks) {
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

export function createWorker(options: WorkerOptions) {
  const { db, clock, logger, handlers } = options
  const batchSize = options.batchSize ?? 20
  const pollIntervalMs = options.pollIntervalMs ?? 1000
  const leaseMs = options.leaseMs ?? 5 * MINUTE
  const jobTimeoutMs = options.jobTimeoutMs ?? Math.floor(leaseMs / batchSize)
  if (jobTimeoutMs * batchSize > leaseMs) throw new RangeError(`a batch of ${batchSize} jobs of ${jobTimeoutMs} ms each would outlive its ${leaseMs} ms lease`)
  const timeoutSignal = options.timeoutSignal ?? ((ms: number) => AbortSignal.timeout(ms))
  const outbox = createOutboxRepository(db)
  const jobRun: JobRun = { outbox, clock, logger, handlers, jobTimeoutMs, timeoutSignal, onAttempt: options.onAttempt }
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined
  let stopped = true
  const lastRun = new Map<string, number>()

  /**
   * Claims and runs one batch of due jobs; returns how many ran. A job is started only while its
   * claim still covers its whole time: one that would run past it (the jobs before it took long)
   * is handed back unstarted, since another worker may claim it once the lease ends.
   */
  async function runOnce(): Promise<{ processed: number; failed: number }> {
    const now = clock.now()
    const leaseUntil = now.getTime() + leaseMs
    // Oldest first: the claim's rows come back in no particular order.
    const jobs = (await outbox.claimDue(now, new Date(leaseUntil), batchSize)).sort((a, b) => a.runAt.getTime() - b.runAt.getTime())
    let processed = 0
    let failed = 0
    for (const job of jobs) {
      if (clock.now().getTime() + jobTimeoutMs > leaseUntil) {
        await outbox.release(job.id, job.attempts)
        continue
      }
      processed++
      if (!(await processJob(job, jobRun))) failed++
    }
    return { processed, failed }
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
  const runPeriodic = () => runDueTasks(options.periodic ?? [], lastRun, clock, logger)

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
