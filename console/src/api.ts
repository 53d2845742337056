import type { Middleware } from 'openapi-fetch'
import { createMarketplaceClient, type paths } from '../../clients/ts/index.ts'

export type { paths }

type Json<R> = R extends { content: { 'application/json': { data: infer D } } } ? D : never
/** The payload of an operation's success answer (200 or 201). */
export type Ok<P extends keyof paths, M extends 'get' | 'post' | 'put'> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer A } ? Json<A> : R extends { 201: infer A } ? Json<A> : never
  : never

/**
 * The session as the API intends it: the access token lives in memory only; the refresh token
 * is kept for the tab (sessionStorage) so a reload does not sign out, and every use of it
 * rotates it. A page opened in another tab signs in again.
 */
const REFRESH_KEY = 'console.refreshToken'
let accessToken: string | undefined
let accessExpires = 0
let refreshing: Promise<boolean> | undefined
const listeners = new Set<() => void>()

function expiryOf(token: string): number {
  try {
    const payload = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number }
    return (payload.exp ?? 0) * 1000
  } catch {
    return 0
  }
}

export function startSession(tokens: { accessToken: string; refreshToken: string }): void {
  accessToken = tokens.accessToken
  accessExpires = expiryOf(tokens.accessToken)
  sessionStorage.setItem(REFRESH_KEY, tokens.refreshToken)
}

/** Forgets the tokens and tells the app (which then shows the sign-in page). */
export function endSession(): void {
  accessToken = undefined
  accessExpires = 0
  sessionStorage.removeItem(REFRESH_KEY)
  for (const listener of listeners) listener()
}

export function onSessionEnd(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

export const hasRefreshToken = (): boolean => sessionStorage.getItem(REFRESH_KEY) !== null

/** Exchanges the refresh token for a new pair, once at a time; false when the session is over. */
export function refreshSession(): Promise<boolean> {
  refreshing ??= (async () => {
    const refreshToken = sessionStorage.getItem(REFRESH_KEY)
    if (!refreshToken) return false
    const response = await fetch('/api/v1/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken }) })
    if (!response.ok) return false
    const body = (await response.json()) as { data: { accessToken: string; refreshToken: string } }
    startSession(body.data)
    return true
  })().finally(() => {
    refreshing = undefined
  })
  return refreshing
}

const paths = new Set(['/api/v1/auth/login', '/api/v1/auth/refresh'])

/** Sends the access token, refreshed a minute before it expires; a 401 on a signed-in call ends the session. */
const session: Middleware = {
  async onRequest({ request }) {
    if (paths.has(new URL(request.url).pathname)) return request
    if (accessToken === undefined || Date.now() > accessExpires - 60_000) {
      if (!(await refreshSession())) return request
    }
    if (accessToken) request.headers.set('authorization', `Bearer ${accessToken}`)
    return request
  },
  async onResponse({ request, response }) {
    if (response.status === 401 && !paths.has(new URL(request.url).pathname)) endSession()
    return response
  },
}

export const api = createMarketplaceClient({ baseUrl: window.location.origin })
api.use(session)

/** The API's error, as a thrown Error carrying its message, code and field details. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly details: unknown,
  ) {
    super(message)
  }
}

type Answer<T> = { data?: { data: T }; error?: unknown; response: Response }

/** The payload of a successful answer, or the API's error thrown. */
export async function call<T>(pending: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await pending
  if (data !== undefined) return data.data
  const body = error as { error?: { message?: string; code?: string; details?: unknown } } | undefined
  throw new ApiError(body?.error?.message ?? `The server answered ${response.status}`, body?.error?.code ?? 'ERROR', response.status, body?.error?.details)
}
