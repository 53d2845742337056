import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { checkedAddress, type ResolvedAddress, type Resolver } from './destinations.ts'

/** At most this much of a receiver's answer is kept in the delivery log. */
export const EXCERPT_BYTES = 1024

export interface SignedMessage {
  url: string
  /** The `webhook-id`: the event's id, the same on every attempt. */
  messageId: string
  body: string
  /** The secrets that sign it: the current one, and the previous one during a rotation. */
  secrets: string[]
  /** The `webhook-timestamp` (this attempt's time). */
  timestamp: Date
}

export interface SendResult {
  statusCode: number | null
  error: string | null
  responseExcerpt: string | null
  latencyMs: number
}

export interface SenderOptions {
  allowPrivateNetworks: boolean
  resolve: Resolver
  /** The whole exchange must finish within this (10 s, decision 0061). */
  timeoutMs: number
}

/**
 * The Standard Webhooks headers. The `standardwebhooks` package signs; with several secrets the
 * header carries one `v1,<signature>` per secret, separated by spaces, and receivers accept any.
 */
export function signatureHeaders(message: Pick<SignedMessage, 'messageId' | 'body' | 'secrets' | 'timestamp'>): Record<string, string> {
  const signatures = message.secrets.map((secret) => new Webhook(secret).sign(message.messageId, message.timestamp, message.body))
  return {
    'webhook-id': message.messageId,
    'webhook-timestamp': String(Math.floor(message.timestamp.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  }
}

/** A `lookup` that answers only the address that was checked, whatever DNS says now. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }])
    else callback(null, pinned.address, pinned.family)
  }) as LookupFunction
}

/** Reads at most EXCERPT_BYTES of the answer, then stops reading. */
function excerptOf(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    // PostgreSQL text cannot hold NUL characters: a binary answer must not make the attempt unrecordable.
    const done = () => resolve(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', ''))
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
      if (size >= EXCERPT_BYTES) {
        done()
        response.destroy()
      }
    })
    response.on('end', done)
    response.on('error', done)
    response.on('close', done)
  })
}

/**
 * POSTs one signed message. Never throws: the outcome is the status code (redirects are not
 * followed, so a 3xx is an answer like any other), or the error (refused destination, connection
 * failure, timeout). The connection goes to the checked address; the Host header and the TLS
 * server name stay the URL's host.
 */
export async function sendSigned(message: SignedMessage, options: SenderOptions): Promise<SendResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const url = new URL(message.url)
  let pinned: ResolvedAddress
  try {
    pinned = await checkedAddress(url, options)
  } catch (error) {
    return { statusCode: null, error: (error as Error).message, responseExcerpt: null, latencyMs: elapsed() }
  }
  const transport = url.protocol === 'https:' ? https : http
  return new Promise<SendResult>((resolve) => {
    let settled = false
    const finish = (result: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...result, latencyMs: elapsed() })
    }
    const request = transport.request(url, {
      method: 'POST',
      // One connection per attempt: nothing pooled outlives the check that allowed it.
      agent: false,
      lookup: pinnedLookup(pinned),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Marketplace-Webhooks/1',
        'content-length': Buffer.byteLength(message.body),
        ...signatureHeaders(message),
      },
    })
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${options.timeoutMs} ms`, responseExcerpt: null })
      request.destroy()
    }, options.timeoutMs)
    request.on('response', (response) => {
      void excerptOf(response).then((excerpt) => finish({ statusCode: response.statusCode ?? null, error: null, responseExcerpt: excerpt }))
    })
    request.on('error', (error) => finish({ statusCode: null, error: error.message || 'connection failed', responseExcerpt: null }))
    request.end(message.body)
  })
}
