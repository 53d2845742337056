import type { FastifyReply, FastifyRequest } from 'fastify'
import { SECOND } from '../lib/clock.ts'

/** How much of an unread body is read and thrown away after an early answer. */
export interface DrainBound {
  /** Bytes read after the answer; past this the connection is cut. */
  maxBytes: number
  /** Time after the answer; past this the connection is cut, however little came. */
  maxMs: number
}

/**
 * The bound for a route whose bodies may weigh `bodyLimit` bytes: a body of any size the route
 * takes, or somewhat over it, is read to its end; the time allows a slow upload of one.
 */
export const drainBoundFor = (bodyLimit: number): DrainBound => ({ maxBytes: 2 * bodyLimit, maxMs: 30 * SECOND })

/**
 * An answer sent before the request body was read to its end: a refusal that needs no body (no
 * token, a rate limit), or one that stops reading it (a file over its limit, a malformed form).
 *
 * Most HTTP clients (Node's fetch among them) send the whole body before they read the answer. A
 * server that closes the connection with unread bytes in its receive buffer makes the kernel
 * reset it, and such a client gets EPIPE or ECONNRESET instead of the answer. So, as HTTP servers
 * do, the rest of the body is read and thrown away, up to a bound in bytes and in time; when the
 * body ends within it, the connection stays usable. A body beyond the bound is cut off: at once
 * when its declared length says so (the answer then carries `Connection: close`), else when the
 * bound is reached.
 *
 * Called from an `onSend` hook, before the answer's headers are written.
 */
export function drainUnreadBody(request: FastifyRequest, reply: FastifyReply, bound: DrainBound): void {
  const raw = request.raw
  if (raw.complete || raw.readableEnded || raw.destroyed) return
  const declared = Number(raw.headers['content-length'])
  // A refused protocol upgrade owns its socket: nothing follows on it.
  if (declared > bound.maxBytes || raw.headers.upgrade !== undefined) {
    reply.header('connection', 'close')
    return
  }
  // Fastify asks for a close after a body parser's error; draining replaces it.
  reply.removeHeader('connection')
  let read = 0
  const stop = () => {
    clearTimeout(timer)
    raw.off('data', count)
  }
  // Destroying the request closes its connection.
  const cut = () => {
    stop()
    raw.destroy()
  }
  const count = (chunk: Buffer) => {
    read += chunk.length
    if (read > bound.maxBytes) cut()
  }
  const timer = setTimeout(cut, bound.maxMs).unref()
  // A form parser that stopped reading may still be piped: the rest goes nowhere but here.
  raw.unpipe()
  raw.on('data', count)
  raw.once('end', stop)
  raw.once('close', stop)
  raw.resume()
}
