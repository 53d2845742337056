import { AsyncLocalStorage } from 'node:async_hooks'

const running = new AsyncLocalStorage<AbortSignal>()

/**
 * Runs a job's handler with the signal that ends it when its time is up. What a handler does
 * over the network reads it with `jobSignal()` (the SMTP mailer aborts its connection), so a job
 * that ran out of time stops sending instead of finishing after its retry was scheduled, or after
 * another worker took it over.
 */
export const runWithJobSignal = <T>(signal: AbortSignal, run: () => Promise<T>): Promise<T> => running.run(signal, run)

/** The signal of the job this code runs for, if it runs for one. */
export const jobSignal = (): AbortSignal | undefined => running.getStore()
