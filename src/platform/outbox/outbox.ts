import type { Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { createOutboxRepository } from './outbox.repository.ts'

export interface JobRequest {
  topic: string
  payload: Record<string, unknown>
  /** Earliest time to run; default now. */
  runAt?: Date
  maxAttempts?: number
}

export const DEFAULT_MAX_ATTEMPTS = 12

/** Writes jobs in the caller's transaction: they exist if and only if the change commits. */
export function createOutbox(deps: { clock: Clock }) {
  return {
    async enqueue(tx: Tx, job: JobRequest): Promise<string> {
      const now = deps.clock.now()
      const row = await createOutboxRepository(tx).insert({
        id: newId(),
        topic: job.topic,
        payload: job.payload,
        status: 'pending',
        maxAttempts: job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        runAt: job.runAt ?? now,
        createdAt: now,
      })
      return row.id
    },
  }
}

export type Outbox = ReturnType<typeof createOutbox>
