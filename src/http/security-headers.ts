import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * Helmet's headers, computed once. With a fixed policy (no nonces) they depend on nothing in the
 * request, and `@fastify/helmet` rebuilt the whole policy on every request (about 2% of a read's
 * CPU). Helmet itself still decides what the headers are: its middleware runs once here against
 * a recording response.
 */
export function securityHeadersOf(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value)
    },
    removeHeader: () => undefined,
  }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => undefined)
  return headers
}

/**
 * Helmet's headers that only a document (a page a browser renders) acts on: how it may be opened
 * by other windows, its agent cluster, the referrer its links send, DNS prefetching of its links,
 * old browsers' handling of its downloads, Flash and PDF cross-domain policy files, the legacy XSS
 * filter. A JSON answer is never rendered, so it does without them; `X-Frame-Options`,
 * `X-Content-Type-Options`, `Cross-Origin-Resource-Policy` and HSTS stay on every answer
 * (decision 0236), and so does a content security policy: the document's own on a document,
 * `JSON_POLICY` on a JSON answer (decision 0251).
 */
const DOCUMENT_ONLY = new Set([
  'cross-origin-opener-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
])

/**
 * The content security policy of an answer that is not a document (JSON): it loads nothing and
 * may be framed by no page, which is all a policy can say of it (OWASP's REST Security Cheat
 * Sheet). A document's policy says what its page may load.
 */
export const JSON_POLICY = "default-src 'none'; frame-ancestors 'none'"
const POLICY = 'content-security-policy'

/**
 * The headers split into those every answer carries (with `JSON_POLICY` as its policy) and those
 * a non-JSON answer gets instead or as well (`addDocumentHeaders`), the document's policy among them.
 */
export function splitDocumentHeaders(headers: Record<string, string>): { everyAnswer: Record<string, string>; documentsOnly: Record<string, string> } {
  const entries = Object.entries(headers)
  const policy = headers[POLICY]
  return {
    everyAnswer: Object.fromEntries([...entries.filter(([name]) => !DOCUMENT_ONLY.has(name) && name !== POLICY), ...(policy === undefined ? [] : [[POLICY, JSON_POLICY]])]),
    documentsOnly: Object.fromEntries(entries.filter(([name]) => DOCUMENT_ONLY.has(name) || name === POLICY)),
  }
}

/**
 * A document's headers on a non-JSON answer: each one the reply does not carry yet, and the
 * document's policy in place of `JSON_POLICY` (set on every answer first). A value a route set
 * itself stays, its own policy included. A 304 carries no policy: a cache updates the answer it
 * holds with the 304's headers, and that answer, JSON or a page, keeps its own.
 */
export function addDocumentHeaders(reply: FastifyReply, documentsOnly: Record<string, string>): void {
  // The policy is never absent here (every answer gets one first): it is swapped or removed below.
  addAbsentHeaders(reply, documentsOnly)
  if (reply.statusCode === 304) reply.removeHeader(POLICY)
  else if (reply.getHeader(POLICY) === JSON_POLICY && documentsOnly[POLICY] !== undefined) reply.header(POLICY, documentsOnly[POLICY])
}


/** Adds each header the reply does not carry yet: a value a route set itself stays. */
export function addAbsentHeaders(reply: FastifyReply, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) if (!reply.hasHeader(name)) reply.header(name, value)
}
