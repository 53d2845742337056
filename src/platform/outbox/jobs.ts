import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { OutboxJobRow } from './outbox.table.ts'

/** A kind of background job: its outbox topic and the TypeBox schema of its payload. */
export interface JobType<S extends TSchema = TSchema> {
  readonly topic: string
  readonly payload: S
}

export const defineJob = <S extends TSchema>(topic: string, payload: S): JobType<S> => ({ topic, payload })

/** What runs a job of one type; the worker checks the stored payload against the schema first. */
export interface JobHandler {
  readonly topic: string
  run(payload: unknown, row: OutboxJobRow): Promise<void>
}

/**
 * Binds a job type to the function that runs it. A payload that does not match the schema (a
 * job written by an older version, or by hand) fails like any other error: retried, then dead.
 */
export function handleJob<S extends TSchema>(job: JobType<S>, run: (payload: Static<S>, row: OutboxJobRow) => Promise<void>): JobHandler {
  const check = TypeCompiler.Compile(job.payload)
  return {
    topic: job.topic,
    async run(payload, row) {
      if (!check.Check(payload)) {
        const first = check.Errors(payload).First()
        throw new Error(`payload of ${job.topic} does not match its schema${first ? ` (${first.path || '/'}: ${first.message})` : ''}`)
      }
      await run(payload, row)
    },
  }
}
