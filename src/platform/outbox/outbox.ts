import type { Static, TSchema } from '@sinclair/typebox'
import type { Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import type { JobType } from './jobs.ts'
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
  const outbox = {
    /** A job of a declared type, its payload checked against the type's schema by the compiler. */
    add<S extends TSchema>(tx: Tx, job: JobType<S>, payload: Static<S>, options: Pick<JobRequest, 'runAt' | 'maxAttempts'> = {}): Promise<string> {
      return outbox.enqueue(tx, { topic: job.topic, payload: payload as Record<string, unknown>, ...options })
    },

    /** Any topic and payload: for the platform's own plumbing and for tests of the worker. */
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
  return outbox
}

export type Outbox = ReturnType<typeof createOutbox>
