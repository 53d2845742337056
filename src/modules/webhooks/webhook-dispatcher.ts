import type { FastifyBaseLogger } from 'fastify'
import type { Db, Tx } from '../../db/client.ts'
import { DAY, HOUR, MINUTE, SECOND, type Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { createDeliveriesRepository } from './deliveries.repository.ts'
import type { Resolver } from './destinations.ts'
import { createEndpointsRepository } from './endpoints.repository.ts'
import { WEBHOOK_JOBS } from './webhook-jobs.ts'
import { sendSigned, type SendResult, type SignedMessage } from './webhook-sender.ts'
import type { DeliveryRow, EndpointRow } from './webhooks.table.ts'

/** Waits after each failed attempt (decision 0061): about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, a day and more in all. */
export const RETRY_DELAYS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const
/** An endpoint whose every attempt failed for this long is disabled, and the superusers told. */
export const DISABLE_AFTER_MS = DAY
export const DELIVERY_TIMEOUT_MS = 10 * SECOND

/** The wait after the `failures`-th failed attempt of a schedule (up to 10 % later, so retries spread out); undefined when it was the last. */
export function retryDelay(failures: number, random: () => number = Math.random): number | undefined {
  const base = RETRY_DELAYS[failures - 1]
  return base === undefined ? undefined : Math.round(base * (1 + 0.1 * random()))
}

export interface DispatcherOptions {
  db: Db
  clock: Clock
  outbox: Outbox
  logger: FastifyBaseLogger
  allowPrivateNetworks: boolean
  resolve: Resolver
  /** The static endpoint's current URL and secret, from the configuration. */
  configured?: { url: string; secret: string }
  timeoutMs?: number
  /** How long a claim holds before another worker may take the delivery over; longer than any attempt. */
  leaseMs?: number
  /** Deliveries claimed per endpoint at once, and deliveries in flight in this process at most. */
  perEndpoint?: number
  maxInFlight?: number
  random?: () => number
  send?: (message: SignedMessage, options: { allowPrivateNetworks: boolean; resolve: Resolver; timeoutMs: number }) => Promise<SendResult>
}

/** A delivery a tick started: `done` settles once its attempt is recorded. */
export interface DeliveryTask {
  deliveryId: string
  endpointId: string
  done: Promise<void>
}

const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300

/** What the receiver's answer says, for the delivery's `lastError`. */
const describeFailure = (result: SendResult) => result.error ?? `answered ${result.statusCode}`

/** The static endpoint signs with the configured secret; a rotated one with its previous secret too, until that expires. */
function secretsOf(endpoint: EndpointRow, now: Date, configured: DispatcherOptions['configured']): string[] {
  if (endpoint.source === 'config' && configured) return [configured.secret]
  const previous = endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now ? [endpoint.previousSecret] : []
  return [endpoint.secret, ...previous]
}

async function disableEndpoint(deps: Pick<DispatcherOptions, 'outbox' | 'logger'>, tx: Tx, endpoint: EndpointRow, reason: string, at: Date): Promise<void> {
  const { outbox, logger } = deps
  const disabled = await createEndpointsRepository(tx).disable(endpoint.id, reason, at)
  if (!disabled) return
  logger.warn({ endpointId: endpoint.id, url: endpoint.url, reason }, 'webhook endpoint disabled')
  await outbox.add(tx, WEBHOOK_JOBS.endpointDisabled, { endpointId: endpoint.id, reason })
}

/** What recording an attempt needs: the retry jitter comes resolved from the options. */
type Recording = Pick<DispatcherOptions, 'db' | 'clock' | 'outbox' | 'logger'> & { random: () => number }

/** Records an attempt and its outcome: success, the next retry, or failure for good (disabling the endpoint on 410 or a day of failures). */
async function recordResult(deps: Recording, row: DeliveryRow, endpoint: EndpointRow, startedAt: Date, result: SendResult): Promise<void> {
  const { db, clock, random } = deps
  await db.transaction(async (tx) => {
    const deliveries = createDeliveriesRepository(tx)
    const endpoints = createEndpointsRepository(tx)
    // Deleted with its endpoint meanwhile: there is nothing left to record against.
    if (!(await deliveries.lockById(row.id))) return
    const succeeded = isSuccess(result.statusCode)
    await deliveries.recordAttempt({
      id: newId(),
      deliveryId: row.id,
      attempt: row.attempts,
      startedAt,
      latencyMs: result.latencyMs,
      statusCode: result.statusCode,
      succeeded,
      error: succeeded ? null : describeFailure(result),
      responseExcerpt: result.responseExcerpt,
    })
    const finishedAt = clock.now()
    const outcome = { lockedUntil: null, lastStatusCode: result.statusCode, lastError: succeeded ? null : describeFailure(result) }
    if (succeeded) {
      if (await deliveries.finish(row.id, row.attempts, { ...outcome, status: 'succeeded', completedAt: finishedAt })) await endpoints.markHealthy(endpoint.id)
      return
    }
    const gone = result.statusCode === 410
    const failures = row.scheduleStep + 1
    const delay = gone ? undefined : retryDelay(failures, random)
    const owned = await deliveries.finish(
      row.id,
      row.attempts,
      delay === undefined
        ? { ...outcome, status: 'failed', scheduleStep: failures, completedAt: finishedAt }
        : { ...outcome, status: 'pending', scheduleStep: failures, nextAttemptAt: new Date(finishedAt.getTime() + delay) },
    )
    // A worker whose lease ran out records its attempt but leaves the outcome to the newer claim.
    if (!owned) return
    if (gone) return disableEndpoint(deps, tx, endpoint, 'The receiver answered 410 Gone', finishedAt)
    const failing = await endpoints.markFailing(endpoint.id, startedAt)
    if (failing?.failingSince && finishedAt.getTime() - failing.failingSince.getTime() >= DISABLE_AFTER_MS) {
      await disableEndpoint(deps, tx, endpoint, 'Every delivery attempt failed for 24 hours', finishedAt)
    }
  })
}

/**
 * Delivers webhooks (decision 0061). Each `tick` claims due deliveries and starts them without waiting:
 * deliveries run side by side, at most `perEndpoint` per endpoint, and an endpoint still being
 * delivered to by this worker is not claimed again, so a slow or dead receiver holds only its own
 * deliveries. Each attempt is recorded with its outcome, then the delivery succeeds, waits for its
 * next retry, or fails for good; 410 and a day of failures disable the endpoint.
 */
export function createWebhookDispatcher(options: DispatcherOptions) {
  const { db, clock, logger } = options
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const leaseMs = options.leaseMs ?? timeoutMs + MINUTE
  const perEndpoint = options.perEndpoint ?? 5
  const maxInFlight = options.maxInFlight ?? 50
  const recording: Recording = { ...options, random: options.random ?? Math.random }
  const send = options.send ?? sendSigned
  const busy = new Map<string, number>()
  const running = new Set<Promise<void>>()

  async function deliver(row: DeliveryRow): Promise<void> {
    const endpoint = await createEndpointsRepository(db).findById(row.endpointId)
    // Deleted meanwhile: its deliveries went with it.
    if (!endpoint) return
    const startedAt = clock.now()
    const url = endpoint.source === 'config' && options.configured ? options.configured.url : endpoint.url
    const result = await send(
      { url, messageId: row.messageId, body: row.body, secrets: secretsOf(endpoint, startedAt, options.configured), timestamp: startedAt },
      { allowPrivateNetworks: options.allowPrivateNetworks, resolve: options.resolve, timeoutMs },
    )
    await recordResult(recording, row, endpoint, startedAt, result)
  }

  function start(row: DeliveryRow): DeliveryTask {
    busy.set(row.endpointId, (busy.get(row.endpointId) ?? 0) + 1)
    const task = deliver(row)
      .catch((error: unknown) => logger.error({ err: error, deliveryId: row.id }, 'webhook delivery could not be recorded; it is retried when its lease ends'))
      .finally(() => {
        const left = (busy.get(row.endpointId) ?? 1) - 1
        if (left > 0) busy.set(row.endpointId, left)
        else busy.delete(row.endpointId)
        running.delete(task)
      })
    running.add(task)
    return { deliveryId: row.id, endpointId: row.endpointId, done: task }
  }

  /** Claims what is due and starts it; returns the deliveries it started, which go on in the background. */
  async function tick(): Promise<DeliveryTask[]> {
    const capacity = maxInFlight - running.size
    if (capacity <= 0) return []
    const now = clock.now()
    const rows = await createDeliveriesRepository(db).claimDue({ now, leaseUntil: new Date(now.getTime() + leaseMs), limit: capacity, perEndpoint, busy: [...busy.keys()] })
    return rows.map(start)
  }

  /** Waits for every delivery in flight to be attempted and recorded. */
  async function settle(): Promise<void> {
    while (running.size > 0) await Promise.all([...running])
  }

  /** Ticks and settles until nothing is due: for tests and the CLI. Returns how many deliveries ran. */
  async function drain(): Promise<number> {
    let total = 0
    for (;;) {
      // Endpoints still in flight were skipped by this tick: once they settle, look again.
      const hadInFlight = running.size > 0
      const started = (await tick()).length
      await settle()
      total += started
      if (started === 0 && !hadInFlight) return total
    }
  }

  return { tick, settle, drain, inFlight: () => running.size }
}

export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>