import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify'
import type {} from '@fastify/websocket'
import fp from 'fastify-plugin'
import { can, type AccessClaims, type Actor, type Authenticate, type Caller, type Permission, type Session, type UncheckedCaller } from '../access/access.ts'
import { AppError, forbidden, unauthenticated } from '../lib/errors.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, when a valid access token was presented. */
    session: Session | null
    /** Why a presented token was refused; answered only on routes that require a session. */
    authError: AppError | null
    /** On a route that reads the session in its own statement: the caller's verified token, its session unchecked. */
    uncheckedCaller: UncheckedCaller | null
  }
  interface FastifyContextConfig {
    /**
     * The route's service reads the session in its own statement and confirms it before it answers
     * or writes (decision 0087), so the hook only verifies the token: one round trip less.
     */
    checksSessionItself?: boolean
  }
}

/** `Authorization: Bearer <token>`; any other scheme word means no token (docs/api-conventions.md). */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header)
  return match?.[1]
}

/**
 * Browsers cannot set headers on a WebSocket: they send the token as the subprotocol pair
 * `Sec-WebSocket-Protocol: bearer, <token>`. Read on upgrade requests only, never from the URL.
 */
export function subprotocolToken(request: FastifyRequest): string | undefined {
  const header = request.headers['sec-websocket-protocol']
  if (typeof header !== 'string') return undefined
  const [scheme, token, ...rest] = header.split(',').map((part) => part.trim())
  return scheme === 'bearer' && token && rest.length === 0 ? token : undefined
}

/**
 * Identifies the caller on every request, before rate limiting (which counts per user).
 * It never refuses: public routes ignore a bad token; guarded routes answer 401 below. A route
 * that checks the session itself gets the verified token only, unless the request carries an
 * Idempotency-Key: a stored answer is replayed before the route runs, so only to a checked session.
 */
export const identifyCaller = fp(async (app: FastifyInstance, options: { authenticate: Authenticate; verifyAccess: (token: string) => Promise<AccessClaims> }) => {
  app.decorateRequest('session', null)
  app.decorateRequest('authError', null)
  app.decorateRequest('uncheckedCaller', null)
  const refused = (request: FastifyRequest, done: (error?: Error) => void) => (error: unknown) => {
    if (!(error instanceof AppError)) return done(error as Error)
    request.authError = error
    done()
  }
  app.addHook('onRequest', (request, _reply, done) => {
    const token = bearerToken(request) ?? (request.ws ? subprotocolToken(request) : undefined)
    if (!token) {
      done()
      return
    }
    if (request.routeOptions.config.checksSessionItself === true && request.headers['idempotency-key'] === undefined) {
      options.verifyAccess(token).then((claims) => {
        request.uncheckedCaller = { claims, requestId: request.id }
        done()
      }, refused(request, done))
      return
    }
    options.authenticate(token).then((session) => {
      // The session is this request's own object: the actor learns which request it acts through.
      session.actor.requestId = request.id
      request.session = session
      done()
    }, refused(request, done))
  })
})

/** The caller's session, or the 401 that explains why there is none (bad, expired, revoked token). */
export function sessionOf(request: FastifyRequest): Session {
  if (!request.session) throw request.authError ?? unauthenticated()
  return request.session
}

export const requireAuth: preValidationAsyncHookHandler = async (request: FastifyRequest) => {
  if (!request.uncheckedCaller) sessionOf(request)
}

export const requireStaff: preValidationAsyncHookHandler = async (request: FastifyRequest) => {
  const { actor } = sessionOf(request)
  if (!actor.isStaff && !actor.isSuperuser) throw forbidden()
}

export const requireSuperuser: preValidationAsyncHookHandler = async (request: FastifyRequest) => {
  if (!sessionOf(request).actor.isSuperuser) throw forbidden('Only a superuser may do this')
}

/** 401 without a valid token, 403 without the permission (staff with a role granting it, or a superuser). */
export const requirePermission =
  (permission: Permission): preValidationAsyncHookHandler =>
  async (request: FastifyRequest) => {
    if (!can(sessionOf(request).actor, permission)) throw forbidden(`Requires the ${permission} permission`)
  }

export const actorOf = (request: FastifyRequest): Actor => sessionOf(request).actor

/** On a route that checks the session itself: the caller to hand to its service, checked or not. */
export const callerOf = (request: FastifyRequest): Caller => request.uncheckedCaller ?? sessionOf(request).actor
