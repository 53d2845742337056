import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { vi } from 'vitest'

export interface ReceivedRequest {
  headers: IncomingHttpHeaders
  body: string
  /** What the receiver answered (`hang` until released). */
  answer: number | 'hang'
}

/** How the receiver answers the next requests: a status (with an optional body and headers), or hang. */
export type Behaviour = { status: number; body?: string; headers?: Record<string, string> } | 'hang'

/**
 * A real HTTP webhook receiver on 127.0.0.1 (a free port). It records every request and answers
 * as told; `hang` keeps the request open until `release` (or `close`).
 */
export async function startReceiver(initial: Behaviour = { status: 200, body: 'ok' }) {
  let behaviour: Behaviour = initial
  const received: ReceivedRequest[] = []
  const hanging: ServerResponse[] = []
  const waiters: { count: number; resolve: () => void }[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const current = behaviour
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), answer: current === 'hang' ? 'hang' : current.status })
      for (const waiter of waiters.filter((candidate) => received.length >= candidate.count)) waiter.resolve()
      if (current === 'hang') hanging.push(response)
      else response.writeHead(current.status, current.headers).end(current.body ?? '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    answer(next: Behaviour) {
      behaviour = next
    },
    /** Resolves once `count` requests have arrived in all. */
    waitForRequests(count: number): Promise<void> {
      if (received.length >= count) return Promise.resolve()
      return new Promise((resolve) => waiters.push({ count, resolve }))
    },
    /** Answers the hanging requests. */
    release(status = 200) {
      for (const response of hanging.splice(0)) response.writeHead(status).end()
    },
    async close() {
      for (const response of hanging.splice(0)) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>

/**
 * Checks a received request with the `standardwebhooks` verifier as a receiver would, at the
 * receiver's time `at` (the verifier refuses timestamps five minutes away from its clock, and the
 * test moves an injected clock). Returns the parsed body; throws when no signature matches.
 */
export function verifyWebhook(secret: string, request: ReceivedRequest, at: Date): unknown {
  vi.useFakeTimers({ toFake: ['Date'], now: at })
  try {
    return new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    })
  } finally {
    vi.useRealTimers()
  }
}
