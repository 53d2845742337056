import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import WebSocket from 'ws'
import { API } from './test-app.ts'

export interface ReceivedFrame {
  type: string
  data: Record<string, unknown>
}

/** Listens on a free port of 127.0.0.1 and answers the socket address. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return `ws://127.0.0.1:${port}${API}/messages/ws`
}

/** A client socket that records every frame and lets a test wait for the ones it expects. */
export class TestSocket {
  readonly frames: ReceivedFrame[] = []
  private waiters: { predicate: (frame: ReceivedFrame) => boolean; resolve: (frame: ReceivedFrame) => void }[] = []
  readonly closed: Promise<{ code: number; reason: string }>

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as ReceivedFrame
      this.frames.push(frame)
      this.waiters = this.waiters.filter((waiter) => {
        if (!waiter.predicate(frame)) return true
        waiter.resolve(frame)
        return false
      })
    })
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })))
  }

  /** The first frame (already received or to come) that matches. */
  next(predicate: (frame: ReceivedFrame) => boolean): Promise<ReceivedFrame> {
    const found = this.frames.find(predicate)
    if (found) return Promise.resolve(found)
    return new Promise((resolve) => this.waiters.push({ predicate, resolve }))
  }

  /** The `message` frame carrying this message id. */
  message(id: string): Promise<ReceivedFrame> {
    return this.next((frame) => frame.type === 'message' && frame.data.id === id)
  }

  messageIds(): string[] {
    return this.frames.filter((frame) => frame.type === 'message').map((frame) => frame.data.id as string)
  }

  close(): void {
    this.ws.close()
  }
}

export type SocketAuth = { header: string } | { subprotocol: string } | { none: true } | { headers: Record<string, string>; protocols?: string[] }

function connect(url: string, auth: SocketAuth, options: WebSocket.ClientOptions = {}): WebSocket {
  if ('header' in auth) return new WebSocket(url, { ...options, headers: { authorization: `Bearer ${auth.header}` } })
  if ('subprotocol' in auth) return new WebSocket(url, ['bearer', auth.subprotocol], options)
  if ('headers' in auth) return new WebSocket(url, auth.protocols ?? [], { ...options, headers: auth.headers })
  return new WebSocket(url, options)
}

/** Opens an authenticated socket and waits until it is open. */
export function openSocket(url: string, auth: SocketAuth, options: WebSocket.ClientOptions = {}): Promise<TestSocket> {
  const ws = connect(url, auth, options)
  const socket = new TestSocket(ws)
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket))
    ws.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused with ${response.statusCode}`)))
    ws.once('error', reject)
  })
}

/** Tries to open a socket that must be refused; answers the HTTP status and body of the refusal. */
export function refusedUpgrade(url: string, auth: SocketAuth): Promise<{ status: number; body: string }> {
  const ws = connect(url, auth)
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close()
      reject(new Error('the upgrade was accepted'))
    })
    ws.once('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += String(chunk)))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
      response.on('error', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    ws.once('error', (error) => reject(error))
  })
}
