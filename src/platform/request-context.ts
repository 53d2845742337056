import { AsyncLocalStorage } from 'node:async_hooks'

/** What the platform knows about the request a piece of work runs for. */
export interface RequestContext {
  requestId: string
}

const storage = new AsyncLocalStorage<RequestContext>()

/**
 * Runs `work` (and everything it awaits) inside a request's context. The app's first `onRequest`
 * hook calls it with Fastify's `done`, so hooks, the handler and every service call they make
 * see the request id without each signature carrying it (decision 0040).
 */
export const runInRequestContext = <T>(context: RequestContext, work: () => T): T => storage.run(context, work)

/** The id of the request being served, or null outside one (CLI, worker, tests calling services). */
export const currentRequestId = (): string | null => storage.getStore()?.requestId ?? null
